// The API fuzzer's group-flag part: pto2_group_signal / pto2_group_wait (pto2/kernel.h) driven by
// random scripts. Each task's AIC and AIV kernels run a script from its scalars — signal flag f,
// wait for flag f, spin a few microseconds — with flags mostly in 0..7 but also 8, 15, 16, 17 (the
// runtime's done bits sit above the flags), 31, 32, 2^31 and 2^32 - 1; mixed tasks with 1..clusters
// blocks (also 0 and more than the clusters: refused), and the same scripts in tasks of one kernel
// (no sibling: the calls are no-ops there). A script may return without signalling what its
// sibling waits for, or wait for a flag the sibling signals only after waiting itself (both
// wait for each other: a wait that never comes).
// The oracle simulates each block pair (waits resolve as the API documents) and knows whether
// the run succeeds, and if not which failures may come first:
//   - a run without a predicted failure succeeds and every kernel ran its whole script;
//   - a failing run never hangs (the per-case watchdog names it) and its message says why: a
//     flag out of range, a sibling that returned without signalling, or two kernels that wait
//     for each other;
//   - the next run of the same Runtime works.
// PTO2_API_FUZZ_SEED / PTO2_API_FUZZ_CASES (cases / 5 here, at least 10) / PTO2_API_FUZZ_CASE as
// for ApiFuzz.RandomCallSequences.
#include <gtest/gtest.h>

#include <sched.h>

#include <chrono>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "api_fuzz_driver.h"
#include "test_util.h"

namespace {

enum Op : uint64_t { kSignal = 0, kWait = 1, kSpin = 2 };
uint64_t action(Op op, uint64_t arg) { return (static_cast<uint64_t>(op) << 32) | (arg & 0xffffffffu); }

constexpr uint32_t kMaxBlocks = 4;
constexpr uint32_t kRow = kMaxBlocks * 2;  // one int32 per (block, side): the actions it completed

// Runs this side's script: scalars = [lenAIC, AIC actions..., lenAIV, AIV actions...]. Writes the
// number of actions completed to tensor 0 [block * 2 + side]; returns early when a wait fails.
void run_script(PTO2KernelContext* ctx, uint32_t side) {
  const uint64_t* s = ctx->scalars;
  const uint64_t len0 = s[0];
  const uint64_t* mine = side == 0 ? s + 1 : s + 2 + len0;
  const uint64_t len = side == 0 ? len0 : s[1 + len0];
  uint64_t done = 0;
  for (; done < len; ++done) {
    const uint64_t a = mine[done];
    const uint32_t arg = static_cast<uint32_t>(a);
    const uint64_t op = a >> 32;
    if (op == kSignal) {
      pto2_group_signal(ctx, arg);
    } else if (op == kWait) {
      if (!pto2_group_wait(ctx, arg)) break;
    } else {
      const auto end = std::chrono::steady_clock::now() + std::chrono::microseconds(arg);
      while (std::chrono::steady_clock::now() < end) sched_yield();
    }
  }
  int32_t* out = ctx->tensors[0].ptr<int32_t>();
  out[ctx->block_idx * 2 + side] = static_cast<int32_t>(done);
}
void k_aic(PTO2KernelContext* ctx) { run_script(ctx, 0); }
void k_aiv(PTO2KernelContext* ctx) { run_script(ctx, 1); }

struct Rng {
  std::mt19937_64 g;
  explicit Rng(uint64_t seed) : g(seed) {}
  uint32_t below(uint32_t n) { return n ? static_cast<uint32_t>(g() % n) : 0; }
  bool chance(uint32_t one_in) { return below(one_in) == 0; }
};

// What may fail first in a run (a set: several pairs may fail, and the first wins).
enum Failure : uint32_t { kBadFlag = 1, kGone = 2, kEachOther = 4, kSubmit = 8 };

// The documented behaviour of one block pair (or of one kernel alone when !mixed): the actions each
// side completes and the failures it reports.
struct Outcome {
  uint64_t done[2] = {0, 0};
  uint32_t failures = 0;
};

Outcome simulate(const std::vector<uint64_t> (&script)[2], bool mixed, const bool (&present)[2]) {
  Outcome o;
  bool finished[2] = {!present[0], !present[1]};
  uint32_t signalled[2] = {0, 0};
  for (bool progress = true; progress;) {
    progress = false;
    for (uint32_t side = 0; side < 2; ++side) {
      if (finished[side]) continue;
      const uint32_t other = 1 - side;
      if (o.done[side] == script[side].size()) {
        finished[side] = progress = true;
        continue;
      }
      const uint64_t a = script[side][o.done[side]];
      const uint32_t flag = static_cast<uint32_t>(a);
      const uint64_t op = a >> 32;
      if (op == kSignal) {
        if (flag >= 8) o.failures |= kBadFlag;  // the kernel cannot tell: it goes on
        else signalled[side] |= 1u << flag;
      } else if (op == kWait) {
        if (flag >= 8) {
          o.failures |= kBadFlag;
          finished[side] = progress = true;
          continue;
        }
        if (mixed && !(signalled[other] & (1u << flag))) {
          if (!finished[other]) continue;  // blocked
          o.failures |= kGone;
          finished[side] = progress = true;
          continue;
        }
      }
      ++o.done[side];
      progress = true;
    }
  }
  if (!finished[0] || !finished[1]) o.failures |= kEachOther;  // both blocked, each on the other
  return o;
}

const uint32_t kOddFlags[] = {8, 15, 16, 17, 24, 31, 32, 0x80000000u, 0xffffffffu};

class GroupCase {
 public:
  GroupCase(uint64_t seed, uint64_t index) : rng_(seed * 1000003u + index + 31), seed_(seed), index_(index) {}

  void run() {
    const uint32_t aic = 1 + rng_.below(2), aiv = 1 + rng_.below(3);
    pto2::RuntimeOptions o;
    o.aic_workers(aic).aiv_workers(aiv).deadlock_timeout_ms(2000);
    if (rng_.chance(3)) o.clusters(1);
    if (rng_.chance(3)) o.inline_below_ns(0);
    if (rng_.chance(4)) o.orchestrator_helps(false);
    if (rng_.chance(4)) o.spin_us(0);
    clusters_ = o.clusters_ ? o.clusters_ : std::min(aic, aiv);
    pto2::Runtime rt(o);
    rt.register_kernel(0, "script_aic", pto2::CoreType::AIC, &k_aic).register_kernel(1, "script_aiv", pto2::CoreType::AIV, &k_aiv);
    const uint32_t runs = 1 + rng_.below(2);
    for (uint32_t r = 0; r < runs; ++r) one_run(rt, r);
    check_plain_run(rt);
  }

 private:
  uint32_t flag() {
    if (rng_.chance(12)) return kOddFlags[rng_.below(sizeof kOddFlags / sizeof kOddFlags[0])];
    return rng_.below(rng_.chance(2) ? 2 : 8);  // few flags: waits often meet their signal
  }

  std::vector<uint64_t> script() {
    std::vector<uint64_t> s;
    const uint32_t n = rng_.below(7);
    for (uint32_t i = 0; i < n; ++i) {
      const uint32_t k = rng_.below(7);
      if (k < 3) s.push_back(action(kSignal, flag()));
      else if (k < 5) s.push_back(action(kWait, flag()));
      else s.push_back(action(kSpin, rng_.below(rng_.chance(4) ? 300 : 20)));
    }
    return s;
  }

  struct Task {
    std::vector<uint64_t> script[2];
    bool present[2] = {true, true};
    bool mixed = true;
    uint32_t blocks = 1;
  };

  void one_run(pto2::Runtime& rt, uint32_t r) {
    const uint32_t ntasks = 1 + rng_.below(6);
    std::vector<Task> tasks(ntasks);
    uint32_t expect = 0;  // the failures that may come first
    for (Task& t : tasks) {
      t.script[0] = script();
      t.script[1] = script();
      const uint32_t kind = rng_.below(8);
      if (kind == 0) t.present[1] = false, t.mixed = false;  // an AIC task alone
      else if (kind == 1) t.present[0] = false, t.mixed = false;  // an AIV task alone
      t.blocks = 1 + rng_.below(std::min(clusters_, kMaxBlocks));
      if (rng_.chance(15)) t.blocks = rng_.chance(2) ? 0 : clusters_ + 1 + rng_.below(3);  // refused
      if (!t.mixed) t.blocks = std::min(t.blocks, kMaxBlocks);  // (a task alone may have more blocks)
      const Outcome oc = simulate(t.script, t.mixed, t.present);
      expect |= (t.blocks == 0 || (t.mixed && t.blocks > clusters_)) ? kSubmit : oc.failures;
    }
    std::vector<int32_t> out(ntasks * kRow, -1);
    pto2::RunResult res = rt.run([&](const ChipStorageTaskArgs&) {
      Tensor all = ext1d(out);
      for (uint32_t i = 0; i < ntasks; ++i) {
        const Task& t = tasks[i];
        uint32_t sh[1] = {kRow}, off[1] = {i * kRow};
        Arg a;
        a.add_inout(all.view(sh, off));
        a.add_scalar(t.script[0].size());
        for (uint64_t x : t.script[0]) a.add_scalar(x);
        a.add_scalar(t.script[1].size());
        for (uint64_t x : t.script[1]) a.add_scalar(x);
        a.launch_spec.set_block_num(t.blocks);
        if (t.mixed) rt_submit_task(MixedKernels{0, 1, INVALID_KERNEL_ID}, a);
        else if (t.present[0]) rt_submit_aic_task(0, a);
        else rt_submit_aiv_task(1, a);
      }
    });
    const std::string where = "run " + std::to_string(r) + " (" + std::to_string(ntasks) + " tasks)";
    if (expect == 0) {
      if (!res.ok()) return fail(where + ": a run the oracle expects to succeed failed: " + res.message);
      for (uint32_t i = 0; i < ntasks; ++i)
        for (uint32_t b = 0; b < tasks[i].blocks; ++b)
          for (uint32_t side = 0; side < 2; ++side) {
            if (!tasks[i].present[side]) continue;
            const int32_t got = out[i * kRow + b * 2 + side];
            if (got != static_cast<int32_t>(tasks[i].script[side].size()))
              return fail(where + ": task " + std::to_string(i) + " block " + std::to_string(b) + " side " +
                          std::to_string(side) + " completed " + std::to_string(got) + " of " +
                          std::to_string(tasks[i].script[side].size()) + " actions");
          }
      return;
    }
    if (res.ok()) return fail(where + ": succeeded, but the oracle expects a failure (kinds " + std::to_string(expect) + ")");
    const std::string& m = res.message;
    const bool said = ((expect & kBadFlag) && m.find("is out of range 0..7") != std::string::npos) ||
                      ((expect & kGone) && m.find("returned without signalling flag") != std::string::npos) ||
                      ((expect & kEachOther) && m.find("wait for each other") != std::string::npos) ||
                      ((expect & kSubmit) && m.find("block_num") != std::string::npos);
    if (!said) fail(where + ": the message does not say why (expected kinds " + std::to_string(expect) + "): " + m);
  }

  // After the fuzzed runs: a mixed task whose kernels hand over flag 0 each way still works.
  void check_plain_run(pto2::Runtime& rt) {
    std::vector<int32_t> out(kRow, -1);
    pto2::RunResult res = rt.run([&](const ChipStorageTaskArgs&) {
      Arg a;
      a.add_inout(ext1d(out));
      a.add_scalar(2);
      a.add_scalar(action(kSignal, 0));
      a.add_scalar(action(kWait, 1));
      a.add_scalar(2);
      a.add_scalar(action(kWait, 0));
      a.add_scalar(action(kSignal, 1));
      rt_submit_task(MixedKernels{0, 1, INVALID_KERNEL_ID}, a);
    });
    if (!res.ok() || out[0] != 2 || out[1] != 2) fail("the plain run after the fuzzed ones failed: " + res.message);
  }

  void fail(const std::string& what) { api_fuzz::fail_case(seed_, index_, what); }

  Rng rng_;
  uint64_t seed_, index_;
  uint32_t clusters_ = 1;
};

}  // namespace

TEST(ApiFuzz, GroupFlags) {
  api_fuzz::run_cases(std::max<uint64_t>(10, api_fuzz::env_u64("PTO2_API_FUZZ_CASES", 150) / 5),
                      [](uint64_t seed, uint64_t i) { GroupCase(seed, i).run(); });
}
