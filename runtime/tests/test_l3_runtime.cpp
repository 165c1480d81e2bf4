// Tests of the L3 (distributed HOST) runtime: submit_next_level runs L2 orchestration entries
// as nested libpto2 runs, ordered by add_dep_wait edges and the per-target chain; submit_barrier
// is a dependency-only fan-in point.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "pto_l3_api.h"
#include "test_util.h"

namespace {

// Kernel 0: t0 (inout) = t0 * 2 + s0 (non-commutative: the order of applications shows).
void k_affine(PTO2KernelContext* ctx) {
  const Tensor& t = ctx->tensors[0];
  for (int64_t i = 0; i < t.numel(); ++i) t.ptr<float>()[i] = t.ptr<float>()[i] * 2 + static_cast<float>(ctx->scalars[0]);
}
// Kernel 1 is k_fill (test_util.h): sleep s1 ms, t0 (out) = s0. Kernel 2: t1 (out) = t0 (in).
void k_copy(PTO2KernelContext* ctx) {
  for (int64_t i = 0; i < ctx->tensors[1].numel(); ++i) ctx->tensors[1].ptr<float>()[i] = ctx->tensors[0].ptr<float>()[i];
}

// L2 entries (what generated aicpu_orchestration_entry functions look like).
void l2_affine(const ChipStorageTaskArgs& a) {  // tensor 0 inout, scalar 0 = addend, scalar 1 = sleep ms
  if (a.scalar_count() > 1) sleep_ms(static_cast<int>(a.scalar(1)));
  Arg p;
  p.add_inout(from_tensor_arg(a.tensor(0)));
  p.add_scalar(a.scalar(0));
  rt_submit_aiv_task(0, p);
}
void l2_fill(const ChipStorageTaskArgs& a) {  // tensor 0 out = scalar 0 after scalar 1 ms
  Arg p;
  p.add_output(from_tensor_arg(a.tensor(0)));
  p.add_scalar(a.scalar(0));
  p.add_scalar(a.scalar(1));
  rt_submit_aiv_task(1, p);
}
void l2_copy(const ChipStorageTaskArgs& a) {  // tensor 1 out = tensor 0
  Arg p;
  p.add_input(from_tensor_arg(a.tensor(0)));
  p.add_output(from_tensor_arg(a.tensor(1)));
  rt_submit_aiv_task(2, p);
}
void l2_sleep(const ChipStorageTaskArgs& a) { sleep_ms(static_cast<int>(a.scalar(0))); }
void l2_throws(const ChipStorageTaskArgs&) { throw std::runtime_error("chip exploded"); }
void l2_bad_kernel(const ChipStorageTaskArgs& a) {  // kernel 77 is not registered
  Arg p;
  p.add_inout(from_tensor_arg(a.tensor(0)));
  rt_submit_aiv_task(77, p);
}

pto2::L3Runtime& setup(pto2::L3Runtime& l3) {
  l3.register_kernel(0, "k_affine", pto2::CoreType::AIV, &k_affine);
  l3.register_kernel(1, "k_fill", pto2::CoreType::AIV, &k_fill);
  l3.register_kernel(2, "k_copy", pto2::CoreType::AIV, &k_copy);
  l3.register_target(0, "affine", &l2_affine);
  l3.register_target(1, "fill", &l2_fill);
  l3.register_target(2, "copy", &l2_copy);
  l3.register_target(3, "sleep", &l2_sleep);
  l3.register_target(4, "throws", &l2_throws);
  l3.register_target(5, "bad_kernel", &l2_bad_kernel);
  return l3;
}

pto2::L3Options two_chips() { return pto2::L3Options{}.chips(2).chip_options(workers(1)); }

void host_chain(const ChipStorageTaskArgs& a) {
  // Same target, no deps: the per-target chain orders them. Early ones sleep longer.
  for (uint64_t k = 0; k < a.scalar(0); ++k) {
    TaskArgs args;
    args.add_tensor(from_tensor_arg(a.tensor(0)));
    args.add_scalar(k + 1);
    args.add_scalar(k == 0 ? 30 : 0);
    submit_next_level(0, args);
  }
}

// Runs `entry` on a fresh two-chip L3 runtime with setup()'s targets, the given float
// tensors and scalars as its arguments (under a watchdog).
pto2::L3RunResult run_two_chips(pto2::HostEntry entry, std::initializer_list<std::vector<float>*> tensors,
                                std::initializer_list<uint64_t> scalars = {}) {
  Watchdog wd(60);
  pto2::L3Runtime l3(two_chips());
  setup(l3);
  ChipStorageTaskArgs a;
  for (std::vector<float>* t : tensors) a.add_tensor(ext1d(*t));
  for (uint64_t v : scalars) a.add_scalar(v);
  return l3.run(entry, a);
}

TEST(L3Runtime, SameTargetTasksRunInSubmissionOrder) {
  std::vector<float> x(8, 0.0f);
  pto2::L3RunResult r = run_two_chips(&host_chain, {&x}, {5});
  ASSERT_TRUE(r.ok()) << r.message;
  float want = 0;
  for (int k = 1; k <= 5; ++k) want = want * 2 + static_cast<float>(k);
  for (float v : x) EXPECT_EQ(v, want);
  EXPECT_EQ(r.tasks_submitted, 5u);
  EXPECT_EQ(r.tasks_executed, 5u);
  EXPECT_EQ(r.chain_edges, 4u);
  EXPECT_EQ(r.wait_edges, 0u);
  ASSERT_EQ(r.tasks.size(), 5u);
  for (size_t i = 1; i < r.tasks.size(); ++i) EXPECT_GE(r.tasks[i].start_us, r.tasks[i - 1].end_us);
}

// A chain's next task is queued behind the running one on the same chip (L3Executor::placed),
// so the chain stays on one chip while an independent task uses the other.
void host_chain_and_other(const ChipStorageTaskArgs& a) {
  host_chain(a);
  TaskArgs other;
  other.add_tensor(from_tensor_arg(a.tensor(1)));
  other.add_scalar(9);
  other.add_scalar(0);
  submit_next_level(1, other);
}

TEST(L3Runtime, ChainStaysOnItsChip) {
  std::vector<float> x(8, 0.0f), y(8, 0.0f);
  pto2::L3RunResult r = run_two_chips(&host_chain_and_other, {&x, &y}, {6});
  ASSERT_TRUE(r.ok()) << r.message;
  float want = 0;
  for (int k = 1; k <= 6; ++k) want = want * 2 + static_cast<float>(k);
  for (float v : x) EXPECT_EQ(v, want);
  for (float v : y) EXPECT_EQ(v, 9.0f);
  ASSERT_EQ(r.tasks.size(), 7u);
  for (size_t i = 1; i < 6; ++i) {
    EXPECT_EQ(r.tasks[i].chip, r.tasks[0].chip) << "chain task " << i + 1 << " left its chip";
    EXPECT_GE(r.tasks[i].start_us, r.tasks[i - 1].end_us);
  }
  EXPECT_NE(r.tasks[6].chip, r.tasks[0].chip) << "the independent task waited for the chain's chip";
}

// A transport that never calls placed() / next_early() (the API makes them optional) gets every
// task through next(): a chain's released task must not wait in a chip's early queue.
class NextOnlyTransport : public pto2::L3Transport {
 public:
  uint32_t chips() const override { return 2; }
  void begin(pto2::L3Executor& ex) override {
    for (uint32_t c = 0; c < 2; ++c) {
      threads_.emplace_back([&ex, c] {
        pto2::L3Dispatch d;
        while (!ex.run_over()) {
          if (!ex.next(d, 1000)) continue;
          pto2::L3Completion done;
          done.index = d.index;
          done.chip = c;
          try {
            done.result = ex.run_local(c, d.target_id, *d.args);
            if (!done.result.ok()) done.error = done.result.message;
          } catch (const std::exception& e) {
            done.error = e.what();
          }
          ex.complete(std::move(done));
        }
      });
    }
  }
  void end() override {
    for (std::thread& t : threads_) t.join();
    threads_.clear();
  }

 private:
  std::vector<std::thread> threads_;
};

TEST(L3Runtime, TransportWithoutEarlyQueuesRunsAChain) {
  Watchdog wd(60);
  pto2::L3Runtime l3(two_chips().transport(std::make_shared<NextOnlyTransport>()));
  setup(l3);
  std::vector<float> x(8, 0.0f);
  ChipStorageTaskArgs a;
  a.add_tensor(ext1d(x));
  a.add_scalar(6);
  pto2::L3RunResult r = l3.run(&host_chain, a);
  ASSERT_TRUE(r.ok()) << r.message;
  float want = 0;
  for (int k = 1; k <= 6; ++k) want = want * 2 + static_cast<float>(k);
  for (float v : x) EXPECT_EQ(v, want);
  EXPECT_EQ(r.tasks_executed, 6u);
}

// A task queued behind a failing one on its chip never starts.
void host_fail_then_chain(const ChipStorageTaskArgs& a) {
  TaskArgs bad;
  bad.add_tensor(from_tensor_arg(a.tensor(0)));
  TaskHandle h = submit_next_level(4, bad);
  TaskArgs next;
  next.add_tensor(from_tensor_arg(a.tensor(0)));
  next.add_scalar(5);
  next.add_dep_wait(h);
  submit_next_level(0, next);
}

TEST(L3Runtime, TaskBehindAFailedOneDoesNotRun) {
  std::vector<float> x(4, 1.0f);
  pto2::L3RunResult r = run_two_chips(&host_fail_then_chain, {&x});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message.find("next-level task 1 (target 4 'throws') failed"), std::string::npos) << r.message;
  EXPECT_EQ(r.tasks_executed, 0u);
  for (float v : x) EXPECT_EQ(v, 1.0f);
}

void host_dep_wait(const ChipStorageTaskArgs& a) {
  TaskArgs f;  // slow producer on target 1
  f.add_tensor(from_tensor_arg(a.tensor(0)));
  f.add_scalar(7);
  f.add_scalar(40);
  TaskHandle produced = submit_next_level(1, f);
  TaskArgs c;  // consumer on another target: only the dep-wait orders it
  c.add_tensor(from_tensor_arg(a.tensor(0)));
  c.add_tensor(from_tensor_arg(a.tensor(1)));
  c.add_dep_wait(produced);
  c.add_dep_wait(TaskHandle::invalid());  // ignored
  submit_next_level(2, c);
}

TEST(L3Runtime, DepWaitOrdersTasksOfDifferentTargets) {
  std::vector<float> y(16, 0.0f), z(16, -1.0f);
  pto2::L3RunResult r = run_two_chips(&host_dep_wait, {&y, &z});
  ASSERT_TRUE(r.ok()) << r.message;
  for (float v : z) EXPECT_EQ(v, 7.0f);
  EXPECT_EQ(r.wait_edges, 1u);
  EXPECT_EQ(r.chain_edges, 0u);
  ASSERT_EQ(r.tasks.size(), 2u);
  EXPECT_GE(r.tasks[1].start_us, r.tasks[0].end_us);
}

void host_independent(const ChipStorageTaskArgs&) {
  TaskArgs a, b;
  a.add_scalar(150);
  b.add_scalar(150);
  submit_next_level(3, a);
  TaskHandle none;  // a None seed: no edge
  b.add_dep_wait(none);
  submit_next_level(3, b);  // same target: chained
}
void host_two_targets(const ChipStorageTaskArgs& a) {
  TaskArgs s;
  s.add_scalar(150);
  submit_next_level(3, s);
  TaskArgs f;  // different target, no deps: may run alongside
  f.add_tensor(from_tensor_arg(a.tensor(0)));
  f.add_scalar(3);
  f.add_scalar(0);
  submit_next_level(1, f);
}

TEST(L3Runtime, DifferentTargetsWithoutDepsOverlap) {
  std::vector<float> y(4, 0.0f);
  pto2::L3RunResult r = run_two_chips(&host_two_targets, {&y});
  ASSERT_TRUE(r.ok()) << r.message;
  for (float v : y) EXPECT_EQ(v, 3.0f);
  ASSERT_EQ(r.tasks.size(), 2u);
  EXPECT_LT(r.tasks[1].start_us, r.tasks[0].end_us) << "independent targets should run concurrently on 2 chips";
  EXPECT_NE(r.tasks[0].chip, r.tasks[1].chip);

  pto2::L3RunResult r2 = run_two_chips(&host_independent, {});  // same target twice: chained, serial
  ASSERT_TRUE(r2.ok()) << r2.message;
  ASSERT_EQ(r2.tasks.size(), 2u);
  EXPECT_EQ(r2.chain_edges, 1u);
  EXPECT_EQ(r2.wait_edges, 0u);
  EXPECT_GE(r2.tasks[1].start_us, r2.tasks[0].end_us);
}

void host_failing(const ChipStorageTaskArgs& a) {
  TaskArgs t;
  TaskHandle bad = submit_next_level(4, t);
  TaskArgs f;
  f.add_tensor(from_tensor_arg(a.tensor(0)));
  f.add_scalar(9);
  f.add_scalar(0);
  f.add_dep_wait(bad);
  submit_next_level(1, f);  // must never run
  // Once the run failed, the next submit unwinds the entry (polled for up to 10 s: on a
  // loaded machine the failing task may take a while to be scheduled).
  for (int k = 0; k < 5000; ++k) {
    sleep_ms(2);
    TaskArgs more;
    more.add_scalar(0);  // 'sleep' for 0 ms: succeeds, so task 1 stays the only failure
    submit_next_level(3, more);
  }
}

TEST(L3Runtime, FailingNextLevelTaskStopsTheRun) {
  std::vector<float> y(4, 0.0f);
  pto2::L3RunResult r = run_two_chips(&host_failing, {&y});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message.find("next-level task 1 (target 4 'throws') failed"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("chip exploded"), std::string::npos) << r.message;
  for (float v : y) EXPECT_EQ(v, 0.0f);
  EXPECT_LT(r.tasks_submitted, 5002u);
}

void host_bad_kernel(const ChipStorageTaskArgs& a) {
  TaskArgs t;
  t.add_tensor(from_tensor_arg(a.tensor(0)));
  submit_next_level(5, t);
}

TEST(L3Runtime, FailedL2RunIsReported) {
  std::vector<float> y(4, 0.0f);
  pto2::L3RunResult r = run_two_chips(&host_bad_kernel, {&y});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message.find("(target 5 'bad_kernel') failed"), std::string::npos) << r.message;
}

void host_unknown_target(const ChipStorageTaskArgs&) {
  TaskArgs t;
  submit_next_level(42, t);
  ADD_FAILURE() << "submit_next_level to an unknown target must unwind the host entry";
}

TEST(L3Runtime, UnknownTargetFailsTheRun) {
  Watchdog wd(60);
  pto2::L3Runtime l3(two_chips());
  setup(l3);
  pto2::L3RunResult r = l3.run(&host_unknown_target);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message.find("no L2 entry registered under target id 42"), std::string::npos) << r.message;
}

TaskHandle g_stale;
void host_keep_handle(const ChipStorageTaskArgs&) {
  TaskArgs t;
  t.add_scalar(0);
  g_stale = submit_next_level(3, t);
}
void host_use_stale(const ChipStorageTaskArgs&) {
  TaskArgs t;
  t.add_scalar(0);
  t.add_dep_wait(g_stale);
  submit_next_level(3, t);
}

TEST(L3Runtime, HandleOfAnotherRunIsRejected) {
  Watchdog wd(60);
  pto2::L3Runtime l3(two_chips());
  setup(l3);
  ASSERT_TRUE(l3.run(&host_keep_handle).ok());
  EXPECT_TRUE(g_stale.is_valid());
  pto2::L3RunResult r = l3.run(&host_use_stale);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message.find("not returned by submit_next_level or submit_barrier in this run"), std::string::npos) << r.message;
}

void host_throws(const ChipStorageTaskArgs&) { throw std::runtime_error("host bug"); }

TEST(L3Runtime, HostEntryExceptionIsReported) {
  Watchdog wd(60);
  pto2::L3Runtime l3(two_chips());
  setup(l3);
  pto2::L3RunResult r = l3.run(&host_throws);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message.find("host orchestration entry threw: host bug"), std::string::npos) << r.message;
}

// Two L2 entries that both submit kernel id 0, meaning different kernels (each generated L2
// file numbers its kernels from 0): per-target kernel tables keep them apart.
void k_times3(PTO2KernelContext* ctx) {
  for (int64_t i = 0; i < ctx->tensors[0].numel(); ++i) ctx->tensors[0].ptr<float>()[i] *= 3;
}
void k_plus1(PTO2KernelContext* ctx) {
  for (int64_t i = 0; i < ctx->tensors[0].numel(); ++i) ctx->tensors[0].ptr<float>()[i] += 1;
}
void l2_kernel0(const ChipStorageTaskArgs& a) {
  Arg p;
  p.add_inout(from_tensor_arg(a.tensor(0)));
  rt_submit_aiv_task(0, p);
}
void host_per_target_kernels(const ChipStorageTaskArgs& a) {
  TaskHandle prev;  // x = (x + 1) * 3, three times: 0 -> 3 -> 12 -> 39
  for (int k = 0; k < 3; ++k) {
    TaskArgs p;
    p.add_tensor(from_tensor_arg(a.tensor(0)));
    p.add_dep_wait(prev);
    TaskHandle h = submit_next_level(10, p);
    TaskArgs t;
    t.add_tensor(from_tensor_arg(a.tensor(0)));
    t.add_dep_wait(h);
    prev = submit_next_level(11, t);
  }
}

// Chip runtimes are created on first use: chip options with more clusters than worker pairs are
// refused when the L3Runtime is built (they were capped silently).
TEST(L3Runtime, ChipClustersAboveWorkerPairsAreRefused) {
  try {
    pto2::L3Runtime l3(
        pto2::L3Options{}.chips(2).chip_options(pto2::RuntimeOptions{}.aic_workers(1).aiv_workers(2).clusters(3)));
    ADD_FAILURE() << "accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("L3Options::chip_options: clusters 3 is more than min(aic_workers 1, "
                                         "aiv_workers 2) = 1"), std::string::npos) << e.what();
  }
}

// In-process chips are threads: 0 (no thread to run a task) and more than 4096 (threads were
// started until the system refused one) are refused when the L3Runtime is built.
TEST(L3Runtime, InProcessChipsOutOfRangeAreRefused) {
  for (uint32_t chips : {0u, 4097u}) {  // UINT32_MAX: an EarlyQueue per chip ran out of memory first
    try {
      pto2::L3Runtime l3(pto2::L3Options{}.chips(chips).chip_options(workers(1)));
      ADD_FAILURE() << chips << " chips accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_EQ(std::string(e.what()), "L3Options: chips " + std::to_string(chips) + " is out of range 1..4096 for "
                                       "the in-process transport (each chip is a thread of this process)");
    }
  }
}

TEST(L3Runtime, PerTargetKernelTables) {
  Watchdog wd(60);
  pto2::L3Runtime l3(two_chips());
  l3.register_target(10, "plus1", &l2_kernel0);
  l3.register_target(11, "times3", &l2_kernel0);
  l3.register_target_kernel(10, 0, "k_plus1", pto2::CoreType::AIV, &k_plus1);
  l3.register_target_kernel(11, 0, "k_times3", pto2::CoreType::AIV, &k_times3);
  std::vector<float> x(8, 0.0f);
  ChipStorageTaskArgs a;
  a.add_tensor(ext1d(x));
  pto2::L3RunResult r = l3.run(&host_per_target_kernels, a);
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_EQ(r.tasks_executed, 6u);
  for (float v : x) EXPECT_EQ(v, 39.0f);
}

// A kernel the chip runtimes would refuse is refused at registration (found by
// ApiFuzz.L3RandomHostGraphs: it was stored, and every later run failed when a chip runtime was
// created and registered it), and the runtime stays usable.
TEST(L3Runtime, BadKernelRegistrationsAreRefusedAtOnce) {
  Watchdog wd(60);
  pto2::L3Runtime l3(two_chips());
  auto message = [](auto f) {
    try {
      f();
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no exception");
  };
  EXPECT_NE(message([&] { l3.register_kernel(-1, "neg", pto2::CoreType::AIV, &k_affine); })
                .find("L3Runtime::register_kernel: kernel id out of range: -1 (kernel 'neg'; ids are 0..1000000)"),
            std::string::npos);
  EXPECT_NE(message([&] { l3.register_kernel(3, "nofn", pto2::CoreType::AIV, nullptr); })
                .find("L3Runtime::register_kernel: null function for kernel 'nofn'"),
            std::string::npos);
  EXPECT_NE(message([&] { l3.register_target_kernel(0, 1000001, "big", pto2::CoreType::AIV, &k_affine); })
                .find("L3Runtime::register_target_kernel: kernel id out of range: 1000001"),
            std::string::npos);
  setup(l3);
  std::vector<float> x(4, 1.0f);
  ChipStorageTaskArgs a;
  a.add_tensor(ext1d(x));
  a.add_scalar(3);
  pto2::L3RunResult r = l3.run(&host_chain, a);
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_EQ(r.tasks_executed, 3u);
}

// A run of the same L3Runtime from its host entry or from an L2 entry would wait for itself (it
// hung), and run_target during a run would share the chips with the run's tasks: refused (found
// by ApiFuzz.L3RandomHostGraphs).
pto2::L3Runtime* g_nested_l3 = nullptr;
std::string g_nested_from_host, g_nested_from_l2, g_run_target_during_run;
void l2_runs_own_l3(const ChipStorageTaskArgs&) {
  g_nested_from_l2 = g_nested_l3->run(+[](const ChipStorageTaskArgs&) {}).message;
}
void host_nests(const ChipStorageTaskArgs&) {
  g_nested_from_host = g_nested_l3->run(+[](const ChipStorageTaskArgs&) {}).message;
  std::thread t([] {
    try {
      g_nested_l3->run_target(0, 9, ChipStorageTaskArgs{});
      g_run_target_during_run = "returned";
    } catch (const std::logic_error& e) {
      g_run_target_during_run = e.what();
    }
  });
  t.join();
  TaskArgs a;
  submit_next_level(9, a);
}

TEST(L3Runtime, RunOfTheSameRuntimeAndRunTargetInsideARunAreRefused) {
  Watchdog wd(60);
  pto2::L3Runtime l3(two_chips());
  g_nested_l3 = &l3;
  l3.register_target(9, "runs_own_l3", &l2_runs_own_l3);
  pto2::L3RunResult r = l3.run(&host_nests);
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_EQ(g_nested_from_host, "L3Runtime::run: called from the host entry of a run of this L3Runtime in progress (it "
                                "would wait for itself): one run at a time per L3Runtime");
  EXPECT_EQ(g_nested_from_l2.find("L3Runtime::run: called from an L2 entry (a next-level task) of a run of this L3Runtime"), 0u)
      << g_nested_from_l2;
  EXPECT_EQ(g_run_target_during_run, "L3Runtime::run_target: a run of this L3Runtime is in progress; call it between runs");
  g_nested_l3 = nullptr;
}

TEST(L3Runtime, SubmitOutsideARunThrows) {
  TaskArgs t;
  EXPECT_THROW(submit_next_level(0, t), std::logic_error);
  EXPECT_FALSE(TaskHandle{}.is_valid());
}

// ---- dependency-only barriers (submit_barrier) ------------------------------------------------

// The record of the executed task of `target` (each test below runs each target at most once).
const pto2::L3TaskRecord& record_of(const pto2::L3RunResult& r, int32_t target) {
  for (const pto2::L3TaskRecord& t : r.tasks)
    if (t.target_id == target) return t;
  throw std::runtime_error("no task of target " + std::to_string(target) + " ran");
}

// Runs `entry` on L3 runtimes of 1..4 chips with setup()'s targets (each under a watchdog);
// `make_args` builds fresh arguments per run, `check(result, chips)` checks each.
template <class MakeArgs, class Check>
void sweep_chips(pto2::HostEntry entry, MakeArgs&& make_args, Check&& check) {
  for (uint32_t chips = 1; chips <= 4; ++chips) {
    Watchdog wd(60);
    pto2::L3Runtime l3(pto2::L3Options{}.chips(chips).chip_options(workers(1)));
    setup(l3);
    check(l3.run(entry, make_args()), chips);
  }
}

TaskArgs fill_args(const ChipStorageTaskArgs& a, uint32_t slot, uint64_t value, uint64_t sleep) {
  TaskArgs f;
  f.add_tensor(from_tensor_arg(a.tensor(slot)));
  f.add_scalar(value);
  f.add_scalar(sleep);
  return f;
}

// z := y (target copy), after `after`.
TaskArgs copy_after(const ChipStorageTaskArgs& a, TaskHandle after) {
  TaskArgs c;
  c.add_tensor(from_tensor_arg(a.tensor(0)));
  c.add_tensor(from_tensor_arg(a.tensor(1)));
  c.add_dep_wait(after);
  return c;
}

// The entry arguments of the barrier tests: y, and z when given.
ChipStorageTaskArgs args_of(std::vector<float>& y, std::vector<float>* z = nullptr) {
  ChipStorageTaskArgs a;
  a.add_tensor(ext1d(y));
  if (z) a.add_tensor(ext1d(*z));
  return a;
}

// y := 5 (slow, target fill) and a slow sleeper (target sleep) meet in barrier b1; b2 waits on
// b1 (and a None); z := y (target copy) waits on b2 only. Without the barriers waiting, the
// copy (its own target: no chain) would start at once and read y's initial 0.
void host_barrier_fan_in(const ChipStorageTaskArgs& a) {
  TaskArgs f = fill_args(a, 0, 5, 40);
  TaskHandle filled = submit_next_level(1, f);
  TaskArgs s;
  s.add_scalar(60);
  TaskHandle slept = submit_next_level(3, s);
  TaskArgs b1_args;
  b1_args.add_dep_wait(filled);
  b1_args.add_dep_wait(slept);
  TaskHandle b1 = submit_barrier(b1_args);
  TaskArgs b2_args;
  b2_args.add_dep_wait(b1);
  b2_args.add_dep_wait(TaskHandle::invalid());
  TaskHandle b2 = submit_barrier(b2_args);
  TaskArgs c = copy_after(a, b2);
  submit_next_level(2, c);
}

TEST(L3Barrier, ConsumerWaitsForEveryProducer) {
  std::vector<float> y, z;
  sweep_chips(
      &host_barrier_fan_in,
      [&] {
        y.assign(8, 0.0f);
        z.assign(8, -1.0f);
        return args_of(y, &z);
      },
      [&](const pto2::L3RunResult& r, uint32_t chips) {
        ASSERT_TRUE(r.ok()) << r.message << " (chips " << chips << ")";
        for (float v : z) EXPECT_EQ(v, 5.0f) << "chips " << chips;
        EXPECT_EQ(r.tasks_submitted, 3u);
        EXPECT_EQ(r.tasks_executed, 3u);
        EXPECT_EQ(r.barriers, 2u);
        EXPECT_EQ(r.wait_edges, 4u);  // b1: 2, b2: 1 (the None adds none), consumer: 1
        EXPECT_EQ(r.chain_edges, 0u);
        ASSERT_EQ(r.tasks.size(), 3u);  // barriers run nothing and leave no record
        const pto2::L3TaskRecord& copy = record_of(r, 2);
        EXPECT_EQ(copy.index, 5u) << "barriers take submission indices too";
        EXPECT_GE(copy.start_us, record_of(r, 1).end_us) << "chips " << chips;
        EXPECT_GE(copy.start_us, record_of(r, 3).end_us) << "chips " << chips;
      });
}

TaskHandle g_empty_barrier, g_none_barrier;
void host_barrier_without_waits(const ChipStorageTaskArgs& a) {
  TaskArgs empty;
  g_empty_barrier = submit_barrier(empty);
  TaskArgs none;
  none.add_dep_wait(TaskHandle::invalid());
  none.add_dep_wait(TaskHandle{});
  g_none_barrier = submit_barrier(none);
  TaskArgs f = fill_args(a, 0, 3, 0);  // waiting on invalid barrier handles: no edge
  f.add_dep_wait(g_empty_barrier);
  f.add_dep_wait(g_none_barrier);
  submit_next_level(1, f);
}

TEST(L3Barrier, InvalidHandlesAreIgnored) {
  std::vector<float> y;
  sweep_chips(
      &host_barrier_without_waits,
      [&] {
        y.assign(4, 0.0f);
        return args_of(y);
      },
      [&](const pto2::L3RunResult& r, uint32_t chips) {
        ASSERT_TRUE(r.ok()) << r.message << " (chips " << chips << ")";
        EXPECT_FALSE(g_empty_barrier.is_valid());
        EXPECT_FALSE(g_none_barrier.is_valid());
        EXPECT_EQ(r.barriers, 0u);
        EXPECT_EQ(r.wait_edges, 0u);
        EXPECT_EQ(r.tasks_executed, 1u);
        for (float v : y) EXPECT_EQ(v, 3.0f);
      });
}

// A long sleeper on target sleep, then y := 2 (target fill) behind a barrier on an already
// submitted fast fill: the barrier must not wait for the sleeper (no per-target chain).
void host_barrier_off_chain(const ChipStorageTaskArgs& a) {
  TaskArgs s;
  s.add_scalar(300);
  submit_next_level(3, s);
  TaskArgs f = fill_args(a, 0, 1, 0);
  TaskHandle first = submit_next_level(1, f);
  TaskArgs b;
  b.add_dep_wait(first);
  TaskHandle after_first = submit_barrier(b);
  TaskArgs c = copy_after(a, after_first);
  submit_next_level(2, c);
}

TEST(L3Barrier, JoinsNoTargetChain) {
  std::vector<float> y, z;
  sweep_chips(
      &host_barrier_off_chain,
      [&] {
        y.assign(4, 0.0f);
        z.assign(4, 0.0f);
        return args_of(y, &z);
      },
      [&](const pto2::L3RunResult& r, uint32_t chips) {
        ASSERT_TRUE(r.ok()) << r.message << " (chips " << chips << ")";
        for (float v : z) EXPECT_EQ(v, 1.0f);
        EXPECT_EQ(r.chain_edges, 0u);
        EXPECT_GE(record_of(r, 2).start_us, record_of(r, 1).end_us);
        if (chips >= 2) {
          EXPECT_LT(record_of(r, 2).start_us, record_of(r, 3).end_us)
              << "the copy waited for the sleeper, which the barrier does not depend on (chips " << chips << ")";
        }
      });
}

void host_barrier_on_failure(const ChipStorageTaskArgs& a) {
  TaskArgs t;
  TaskHandle bad = submit_next_level(4, t);
  TaskArgs b;
  b.add_dep_wait(bad);
  TaskHandle after_bad = submit_barrier(b);
  TaskArgs f = fill_args(a, 0, 9, 0);  // must never run
  f.add_dep_wait(after_bad);
  submit_next_level(1, f);
}

TEST(L3Barrier, FailingProducerStillFailsTheRun) {
  std::vector<float> y;
  sweep_chips(
      &host_barrier_on_failure,
      [&] {
        y.assign(4, 0.0f);
        return args_of(y);
      },
      [&](const pto2::L3RunResult& r, uint32_t chips) {
        ASSERT_FALSE(r.ok()) << "chips " << chips;
        EXPECT_NE(r.message.find("next-level task 1 (target 4 'throws') failed"), std::string::npos) << r.message;
        for (float v : y) EXPECT_EQ(v, 0.0f) << "the consumer behind the barrier ran (chips " << chips << ")";
        EXPECT_EQ(r.tasks_executed, 0u);
      });
}

void host_barrier_with_tensor(const ChipStorageTaskArgs& a) {
  TaskArgs b;
  b.add_tensor(from_tensor_arg(a.tensor(0)));
  submit_barrier(b);
  ADD_FAILURE() << "a barrier with a tensor must unwind the host entry";
}

TEST(L3Barrier, ArgumentsOtherThanWaitsFailTheRun) {
  std::vector<float> y(4, 0.0f);
  pto2::L3RunResult r = run_two_chips(&host_barrier_with_tensor, {&y});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message.find("submit_barrier: a barrier runs nothing"), std::string::npos) << r.message;
  TaskArgs t;
  EXPECT_THROW(submit_barrier(t), std::logic_error);
}

}  // namespace
