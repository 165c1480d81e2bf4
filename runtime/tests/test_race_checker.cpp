// The race checker (RuntimeOptions::race_check): unordered conflicting accesses are reported,
// ordered ones never; random MANUAL programs with one required edge removed are always caught.
//
// The random-program test runs PTO2_RACE_FUZZ_CASES seeds (default 600); `make fuzz-race`
// runs many more.
#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <random>
#include <set>

#include "test_util.h"

namespace {

void k_nop(PTO2KernelContext*) {}

pto2::Runtime& checked_runtime(pto2::RaceCheck mode = pto2::RaceCheck::Error) {
  static pto2::Runtime* rt = [] {
    auto* r = new pto2::Runtime(pto2::RuntimeOptions{}.aic_workers(1).aiv_workers(2));
    r->register_kernel(0, "k_nop", pto2::CoreType::AIV, &k_nop);
    r->register_kernel(1, "k_fill", pto2::CoreType::AIV, &k_fill);
    return r;
  }();
  rt->set_race_check(mode);
  return *rt;
}

Tensor slice1d(const Tensor& t, uint32_t lo, uint32_t len) {
  uint32_t sh[1] = {len}, off[1] = {lo};
  return t.view(sh, off);
}

PTO2TaskId submit_nop(std::initializer_list<std::pair<Tensor, PTO2ArgDir>> args, std::vector<PTO2TaskId> deps = {},
                      int line = 0) {
  Arg a;
  for (const auto& p : args) {
    switch (p.second) {
      case PTO2ArgDir::INPUT: a.add_input(p.first); break;
      case PTO2ArgDir::OUTPUT: a.add_output(p.first); break;
      case PTO2ArgDir::INOUT: a.add_inout(p.first); break;
      default: a.add_no_dep(p.first); break;
    }
  }
  if (!deps.empty()) a.set_dependencies(deps.data(), static_cast<uint32_t>(deps.size()));
  if (line) PTO2_SOURCE_SITE(a, "prog.py", line);
  return rt_submit_aiv_task(0, a).task_id();
}

constexpr PTO2ArgDir IN = PTO2ArgDir::INPUT, OUT = PTO2ArgDir::OUTPUT, INOUT = PTO2ArgDir::INOUT,
                     NODEP = PTO2ArgDir::NO_DEP;

}  // namespace

TEST(RaceChecker, ManualWriteThenReadWithoutDepIsReportedWithSitesAndHelp) {
  std::vector<float> x(64, 0);
  pto2::RunResult r = checked_runtime().run([&](const ChipStorageTaskArgs&) {
    PTO2_SCOPE(PTO2ScopeMode::MANUAL) {
      submit_nop({{slice1d(ext1d(x), 0, 32), OUT}}, {}, 10);
      submit_nop({{slice1d(ext1d(x), 16, 32), IN}}, {}, 11);
    }
  });
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.races, 1u);
  ASSERT_EQ(r.race_pairs.size(), 1u);
  EXPECT_EQ(r.race_pairs[0].second, r.race_pairs[0].first + 1);
  EXPECT_NE(r.message.find("read after write"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("'k_nop'"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("prog.py:10"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("prog.py:11"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("overlap elements [16, 32)"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("help: order them"), std::string::npos) << r.message;
}

TEST(RaceChecker, ExplicitEdgeOrdersTheSamePair) {
  std::vector<float> x(64, 0);
  pto2::RunResult r = checked_runtime().run([&](const ChipStorageTaskArgs&) {
    PTO2_SCOPE(PTO2ScopeMode::MANUAL) {
      PTO2TaskId w = submit_nop({{ext1d(x), OUT}});
      submit_nop({{ext1d(x), IN}}, {w});
    }
  });
  EXPECT_TRUE(r.ok()) << r.message;
  EXPECT_EQ(r.races, 0u);
}

TEST(RaceChecker, WarnModeCompletesAndKeepsTheReport) {
  std::vector<float> x(64, 0);
  pto2::RunResult r = checked_runtime(pto2::RaceCheck::Warn).run([&](const ChipStorageTaskArgs&) {
    PTO2_SCOPE(PTO2ScopeMode::MANUAL) {
      submit_nop({{ext1d(x), OUT}});
      submit_nop({{ext1d(x), OUT}});
    }
  });
  EXPECT_TRUE(r.ok()) << r.message;
  EXPECT_EQ(r.races, 1u);
  EXPECT_NE(r.race_report.find("write/write"), std::string::npos) << r.race_report;
}

TEST(RaceChecker, DisjointRegionsAndReadsDoNotConflict) {
  std::vector<float> x(64, 0);
  pto2::RunResult r = checked_runtime().run([&](const ChipStorageTaskArgs&) {
    PTO2TaskId w1, w2;
    PTO2_SCOPE(PTO2ScopeMode::MANUAL) {
      w1 = submit_nop({{slice1d(ext1d(x), 0, 32), OUT}});  // disjoint writers: no race
      w2 = submit_nop({{slice1d(ext1d(x), 32, 32), OUT}});
    }
    PTO2TaskId a = submit_nop({{ext1d(x), IN}}, {w1, w2});  // AUTO, after both writers
    PTO2_SCOPE(PTO2ScopeMode::MANUAL) {
      submit_nop({{ext1d(x), IN}}, {a});  // two unordered readers: fine
      submit_nop({{ext1d(x), IN}}, {a});
      submit_nop({{ext1d(x), IN}});  // not ordered after the writers: two races
    }
  });
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.races, 2u) << r.message;
}

TEST(RaceChecker, TransitiveOrderThroughAutomaticEdgesAndDummies) {
  std::vector<float> x(64, 0), y(64, 0);
  pto2::RunResult r = checked_runtime().run([&](const ChipStorageTaskArgs&) {
    PTO2TaskId m = PTO2TaskId::invalid();
    PTO2_SCOPE(PTO2ScopeMode::MANUAL) { m = submit_nop({{ext1d(x), OUT}}); }
    submit_nop({{ext1d(x), IN}, {ext1d(y), OUT}}, {m});  // AUTO writer of y after m
    submit_nop({{ext1d(y), IN}});                        // AUTO: automatic edge to the y writer
    PTO2TaskId barrier;
    {
      Arg d;
      d.set_dependencies(&m, 1);
      barrier = rt_submit_dummy_task(d).task_id();
    }
    PTO2_SCOPE(PTO2ScopeMode::MANUAL) { submit_nop({{ext1d(x), INOUT}}, {barrier}); }
  });
  // The last task writes x after the dummy (ordered after m) but not after the AUTO reader of x.
  EXPECT_EQ(r.races, 1u) << r.message;
  EXPECT_NE(r.message.find("write after read"), std::string::npos) << r.message;
}

TEST(RaceChecker, GetTensorDataOrdersEarlierWritersBeforeLaterTasks) {
  std::vector<float> x(64, 0);
  pto2::RunResult r = checked_runtime().run([&](const ChipStorageTaskArgs&) {
    PTO2_SCOPE(PTO2ScopeMode::MANUAL) {
      Arg a;
      a.add_output(ext1d(x));
      a.add_scalar(3);
      a.add_scalar(0);
      rt_submit_aiv_task(1, a);
      int64_t idx[1] = {5};
      EXPECT_EQ(get_tensor_data<float>(ext1d(x), 1, idx), 3.0f);
      submit_nop({{ext1d(x), OUT}});  // after the wait: ordered
    }
  });
  EXPECT_TRUE(r.ok()) << r.message;
}

TEST(RaceChecker, ManualDepTensorAndNoDepArgumentsAreChecked) {
  std::vector<float> x(64, 0);
  pto2::RunResult r = checked_runtime().run([&](const ChipStorageTaskArgs&) {
    Tensor t = ext1d(x);
    t.manual_dep = true;
    submit_nop({{t, OUT}});
    submit_nop({{ext1d(x), IN}});  // tracked read, but the write was not tracked
    submit_nop({{ext1d(x), NODEP}});
    submit_nop({{ext1d(x), NODEP}});  // two no_dep arguments: taken as disjoint
  });
  // (0 manual_dep write, 1 read), (0, 2 no_dep), (0, 3 no_dep), (1 read, 2 no_dep), (1, 3)
  EXPECT_EQ(r.races, 5u) << r.message;
}

TEST(RaceChecker, RuntimeAllocatedOutputsAreStorages) {
  pto2::RunResult r = checked_runtime().run([&](const ChipStorageTaskArgs&) {
    PTO2_SCOPE(PTO2ScopeMode::MANUAL) {
      uint32_t sh[1] = {64};
      TensorCreateInfo ci(sh, 1, DataType::FLOAT32);
      Arg a;
      a.add_output(ci);
      TaskOutputTensors o = rt_submit_aiv_task(0, a);
      submit_nop({{o.get_ref(0), IN}});  // no deps on the producer
    }
  });
  EXPECT_EQ(r.races, 1u) << r.message;
  EXPECT_NE(r.message.find("runtime-allocated output of task"), std::string::npos) << r.message;
}

TEST(RaceChecker, OffByDefault) {
  std::vector<float> x(64, 0);
  pto2::RunResult r = checked_runtime(pto2::RaceCheck::Off).run([&](const ChipStorageTaskArgs&) {
    PTO2_SCOPE(PTO2ScopeMode::MANUAL) {
      submit_nop({{ext1d(x), OUT}});
      submit_nop({{ext1d(x), OUT}});
    }
  });
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.races, 0u);
}

namespace {
// Writes 16 elements of its whole-tensor argument from offset s0, reporting the box it touched.
void k_stripe(PTO2KernelContext* ctx) {
  const Tensor& t = ctx->tensors[0];
  const int64_t off[1] = {static_cast<int64_t>(ctx->scalars[0])}, shp[1] = {16};
  if (pto2_race_checking()) pto2_note_access(ctx, t, 1, off, shp, true);
  // Relaxed atomic stores of 1.0f's bits: the overlapping case races on purpose (the checker
  // must report it), and ThreadSanitizer must not.
  for (int64_t i = 0; i < 16; ++i) __atomic_store_n(static_cast<uint32_t*>(t.data) + off[0] + i, 0x3f800000u, __ATOMIC_RELAXED);
}
}  // namespace

TEST(RaceChecker, KernelReportedBoxesReplaceTheWholeArgument) {
  checked_runtime().register_kernel(2, "k_stripe", pto2::CoreType::AIV, &k_stripe);
  EXPECT_FALSE(pto2_race_checking());  // only during a checked run
  std::vector<float> x(64, 0);
  for (int overlap = 0; overlap < 2; ++overlap) {
    pto2::RunResult r = checked_runtime().run([&](const ChipStorageTaskArgs&) {
      PTO2_SCOPE(PTO2ScopeMode::MANUAL) {
        for (int k = 0; k < 2; ++k) {
          Arg a;
          a.add_output(ext1d(x));
          a.add_scalar(static_cast<uint64_t>(k * (overlap ? 8 : 16)));
          rt_submit_aiv_task(2, a);
        }
      }
    });
    EXPECT_EQ(r.races, overlap ? 1u : 0u) << r.message;
    if (overlap) {
      EXPECT_NE(r.message.find("overlap elements [8, 16)"), std::string::npos) << r.message;
    }
  }
}

namespace {
// s0 = 0: an atomic add of 1 into elements [0, 16) of t0 (pto2_note_atomic_add); s0 = 1: a plain
// read of them (pto2_note_access).
void k_accumulate(PTO2KernelContext* ctx) {
  const Tensor& t = ctx->tensors[0];
  const int64_t off[1] = {0}, shp[1] = {16};
  auto* cells = static_cast<uint32_t*>(t.data);
  if (ctx->scalars[0] == 0) {
    if (pto2_race_checking()) pto2_note_atomic_add(ctx, t, 1, off, shp);
    for (int64_t i = 0; i < 16; ++i) __atomic_fetch_add(cells + i, 1u, __ATOMIC_RELAXED);
  } else {
    if (pto2_race_checking()) pto2_note_access(ctx, t, 1, off, shp, false);
    uint32_t sum = 0;
    for (int64_t i = 0; i < 16; ++i) sum += __atomic_load_n(cells + i, __ATOMIC_RELAXED);
    (void)sum;
  }
}
}  // namespace

// Atomic adds (pl.store(..., atomic=pl.AtomicType.Add): split-K accumulation) commute, so
// unordered ones are no race; they were reported as write/write races and failed the run. An
// unordered plain access of the same box still races with them.
TEST(RaceChecker, AtomicAddsDoNotRaceWithEachOtherButDoWithOtherAccesses) {
  checked_runtime().register_kernel(3, "k_accumulate", pto2::CoreType::AIV, &k_accumulate);
  std::vector<int32_t> x(16, 0);
  for (int with_read = 0; with_read < 2; ++with_read) {
    pto2::RunResult r = checked_runtime().run([&](const ChipStorageTaskArgs&) {
      PTO2_SCOPE(PTO2ScopeMode::MANUAL) {
        for (int k = 0; k < 3 + with_read; ++k) {
          Arg a;
          a.add_inout(ext1d(x));
          a.add_scalar(static_cast<uint64_t>(k == 3 ? 1 : 0));   // the fourth task reads
          rt_submit_aiv_task(3, a);
        }
      }
    });
    EXPECT_EQ(r.races, with_read ? 3u : 0u) << r.message;
  }
  EXPECT_EQ(x[5], 6);
}

// ---------------------------------------------------------------- random MANUAL programs

namespace {

struct GenAccess {
  int tensor;
  uint32_t lo, len;  // in tiles of 8 elements
  PTO2ArgDir dir;
};
struct GenTask {
  bool manual;
  std::vector<GenAccess> acc;
  std::vector<int> deps;  // explicit edges from earlier tasks
};
struct GenProgram {
  std::vector<GenTask> tasks;
  std::vector<bool> manual_dep;
};

bool writes(PTO2ArgDir d) { return d != PTO2ArgDir::INPUT; }

// Conflicts between tasks i < j: bit 0 through an automatically tracked pair of accesses (an
// automatic edge orders them), bit 1 through a pair with an untracked side.
int conflict(const GenProgram& p, int i, int j) {
  int c = 0;
  for (const GenAccess& a : p.tasks[i].acc)
    for (const GenAccess& b : p.tasks[j].acc) {
      if (a.tensor != b.tensor || !(writes(a.dir) || writes(b.dir))) continue;
      if (a.lo + a.len <= b.lo || b.lo + b.len <= a.lo) continue;
      const bool tracked = !p.tasks[i].manual && !p.tasks[j].manual && !p.manual_dep[a.tensor];
      c |= tracked ? 1 : 2;
    }
  return c;
}

// reach[i][j]: i reaches j through automatic edges (tracked conflicts) and explicit deps.
std::vector<std::vector<bool>> closure(const GenProgram& p, int skip_from = -1, int skip_to = -1) {
  const int n = static_cast<int>(p.tasks.size());
  std::vector<std::vector<bool>> r(n, std::vector<bool>(n, false));
  for (int j = 0; j < n; ++j) {
    auto edge = [&](int i) {
      r[i][j] = true;
      for (int k = 0; k < i; ++k)
        if (r[k][i]) r[k][j] = true;
    };
    for (int i = 0; i < j; ++i)
      if (conflict(p, i, j) & 1) edge(i);
    for (int i : p.tasks[j].deps)
      if (!(i == skip_from && j == skip_to)) edge(i);
  }
  return r;
}

// Largest program of the fuzz: 14 tasks, or $PTO2_RACE_FUZZ_TASKS (make fuzz-race RACE_FUZZ_TASKS=40;
// the generator's closures cost O(n^4) per program, so keep it under ~60).
int max_fuzz_tasks() {
  const char* env = std::getenv("PTO2_RACE_FUZZ_TASKS");
  return env && std::atoi(env) >= 3 ? std::atoi(env) : 14;
}

GenProgram generate(uint32_t seed) {
  std::mt19937 rng(seed);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  GenProgram p;
  const int n_tensors = pick(1, 3);
  for (int t = 0; t < n_tensors; ++t) p.manual_dep.push_back(pick(0, 5) == 0);
  const int n = pick(3, max_fuzz_tasks());
  bool manual = pick(0, 3) != 0;
  for (int j = 0; j < n; ++j) {
    if (pick(0, 4) == 0) manual = !manual;
    GenTask t;
    t.manual = manual;
    const int na = pick(1, 3);
    for (int k = 0; k < na; ++k) {
      GenAccess a;
      a.tensor = pick(0, n_tensors - 1);
      a.lo = static_cast<uint32_t>(pick(0, 7));
      a.len = static_cast<uint32_t>(pick(1, 8 - static_cast<int>(a.lo)));
      const int d = pick(0, 3);
      a.dir = d <= 1 ? IN : d == 2 ? OUT : INOUT;
      t.acc.push_back(a);
    }
    p.tasks.push_back(t);
  }
  // Explicit edges for every conflict automatic tracking does not order, then drop the
  // redundant ones (ordered anyway through other edges): every edge left is required.
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < j; ++i)
      if (conflict(p, i, j) == 2) p.tasks[j].deps.push_back(i);  // (3: the automatic edge orders them)
  for (int j = 0; j < n; ++j) {
    for (size_t k = 0; k < p.tasks[j].deps.size();) {
      const int i = p.tasks[j].deps[k];
      if (closure(p, i, j)[i][j]) p.tasks[j].deps.erase(p.tasks[j].deps.begin() + static_cast<long>(k));
      else ++k;
    }
  }
  return p;
}

std::string describe(const GenProgram& p) {
  std::string s;
  for (size_t j = 0; j < p.tasks.size(); ++j) {
    s += "task " + std::to_string(j) + (p.tasks[j].manual ? " manual:" : " auto:");
    for (const GenAccess& a : p.tasks[j].acc)
      s += " t" + std::to_string(a.tensor) + (p.manual_dep[static_cast<size_t>(a.tensor)] ? "(md)" : "") + "[" +
           std::to_string(a.lo) + "+" + std::to_string(a.len) + "]" + (a.dir == IN ? "r" : a.dir == OUT ? "w" : "rw");
    s += " deps:";
    for (int i : p.tasks[j].deps) s += " " + std::to_string(i);
    s += "\n";
  }
  return s;
}

// Runs the program (without explicit edge (skip_from -> skip_to) when given).
pto2::RunResult run_program(const GenProgram& p, std::vector<std::vector<float>>& mem, std::vector<uint64_t>& ids,
                            int skip_from = -1, int skip_to = -1) {
  ids.assign(p.tasks.size(), 0);
  return checked_runtime().run([&](const ChipStorageTaskArgs&) {
    std::vector<PTO2TaskId> tid(p.tasks.size());
    size_t j = 0;
    while (j < p.tasks.size()) {
      const bool manual = p.tasks[j].manual;
      PTO2_SCOPE(manual ? PTO2ScopeMode::MANUAL : PTO2ScopeMode::AUTO) {
        for (; j < p.tasks.size() && p.tasks[j].manual == manual; ++j) {
          const GenTask& t = p.tasks[j];
          Arg a;
          for (const GenAccess& g : t.acc) {
            Tensor v = slice1d(ext1d(mem[static_cast<size_t>(g.tensor)]), g.lo * 8, g.len * 8);
            v.manual_dep = p.manual_dep[static_cast<size_t>(g.tensor)];
            if (g.dir == IN) a.add_input(v);
            else if (g.dir == OUT) a.add_output(v);
            else a.add_inout(v);
          }
          std::vector<PTO2TaskId> deps;
          for (int i : t.deps)
            if (!(i == skip_from && static_cast<int>(j) == skip_to)) deps.push_back(tid[static_cast<size_t>(i)]);
          if (!deps.empty()) a.set_dependencies(deps.data(), static_cast<uint32_t>(deps.size()));
          tid[j] = rt_submit_aiv_task(0, a).task_id();
          ids[j] = tid[j].raw;
        }
      }
    }
  });
}

}  // namespace

TEST(RaceChecker, RandomManualProgramsMissingOneRequiredEdgeAreAlwaysCaught) {
  const char* env = std::getenv("PTO2_RACE_FUZZ_CASES");
  const int cases = env ? std::atoi(env) : 600;
  // A hang guard, not a time limit: a fixed 600 s aborted `make fuzz-race` runs larger than CI's
  // on a busy machine (100,000 cases got 14 s of CPU in 600 s under load 27).
  Watchdog wd(std::max(600, cases / 20));
  const uint32_t first_seed = std::getenv("PTO2_RACE_FUZZ_SEED") ? static_cast<uint32_t>(std::atoi(std::getenv("PTO2_RACE_FUZZ_SEED"))) : 1;
  int removed = 0, caught = 0;
  std::vector<std::vector<float>> mem(3, std::vector<float>(64, 0));
  for (int c = 0; c < cases; ++c) {
    const uint32_t seed = first_seed + static_cast<uint32_t>(c);
    GenProgram p = generate(seed);
    std::vector<uint64_t> ids;
    pto2::RunResult full = run_program(p, mem, ids);
    ASSERT_EQ(full.races, 0u) << "seed " << seed << ": false positive\n" << full.message;
    ASSERT_TRUE(full.ok()) << "seed " << seed << ": " << full.message;
    std::vector<std::pair<int, int>> edges;
    for (int j = 0; j < static_cast<int>(p.tasks.size()); ++j)
      for (int i : p.tasks[static_cast<size_t>(j)].deps) edges.emplace_back(i, j);
    if (edges.empty()) continue;
    const auto e = edges[seed % edges.size()];
    ++removed;
    pto2::RunResult cut = run_program(p, mem, ids, e.first, e.second);
    // Every reported pair must be a real race of the cut program (conflicting, unordered)...
    const auto reach = closure(p, e.first, e.second);
    std::set<int> later_tasks;
    for (const auto& pr : cut.race_pairs) {
      const int a = static_cast<int>(std::find(ids.begin(), ids.end(), pr.first) - ids.begin());
      const int b = static_cast<int>(std::find(ids.begin(), ids.end(), pr.second) - ids.begin());
      ASSERT_LT(a, b) << "seed " << seed;
      ASSERT_LT(b, static_cast<int>(ids.size())) << "seed " << seed;
      ASSERT_TRUE(conflict(p, a, b) & 2) << "seed " << seed << ": reported pair does not conflict untracked";
      ASSERT_FALSE(reach[static_cast<size_t>(a)][static_cast<size_t>(b)]) << "seed " << seed << ": reported an ordered pair";
      later_tasks.insert(b);
    }
    // ... and the removed edge's consumer is reported.
    if (cut.races > 0 && later_tasks.count(e.second)) ++caught;
    else ADD_FAILURE() << "seed " << seed << ": removing edge " << e.first << " -> " << e.second << " went unnoticed\n"
                       << describe(p) << cut.message;
  }
  EXPECT_EQ(caught, removed);
  EXPECT_GE(removed, cases / 2) << "the generator should produce required edges in most programs";
  std::printf("race checker fuzz: %d programs, %d with a required edge removed, %d caught\n", cases, removed, caught);
}

// The submission site (PTO2_SOURCE_SITE) also names a failed kernel's task, deferred or not.
TEST(SourceSite, FailedKernelNamesTheSubmissionLine) {
  for (int helps = 0; helps < 2; ++helps) {
    pto2::Runtime rt(pto2::RuntimeOptions{}.aiv_workers(1).orchestrator_helps(helps != 0).inline_below_ns(1000000000));
    rt.register_kernel(0, "k_boom", pto2::CoreType::AIV, [](PTO2KernelContext* ctx) { ctx->fail("boom"); });
    for (int run = 0; run < 2; ++run) {  // the second run knows the kernel is tiny: undeferred when helping
      pto2::RunResult r = rt.run([&](const ChipStorageTaskArgs&) {
        Arg a;
        a.add_scalar(0);
        PTO2_SOURCE_SITE(a, "prog.py", 7);
        rt_submit_aiv_task(0, a);
      });
      EXPECT_NE(r.message.find("'k_boom' (id 0)) submitted at prog.py:7"), std::string::npos) << r.message;
      EXPECT_NE(r.message.find("boom"), std::string::npos) << r.message;
    }
  }
}

// The report numbers a run's tasks from 1 whatever ran before on the runtime (ids count on
// across runs; race_pairs keep the ids, PTO2TaskId values).
TEST(RaceChecker, ReportNumbersTasksFromOneInEachRun) {
  std::vector<float> x(64, 0);
  pto2::Runtime& rt = checked_runtime();
  for (int k = 0; k < 2; ++k) {
    pto2::RunResult ok = rt.run([&](const ChipStorageTaskArgs&) { submit_nop({{ext1d(x), OUT}}); });
    ASSERT_TRUE(ok.ok()) << ok.message;
  }
  PTO2TaskId first;
  pto2::RunResult r = rt.run([&](const ChipStorageTaskArgs&) {
    PTO2_SCOPE(PTO2ScopeMode::MANUAL) {
      first = submit_nop({{slice1d(ext1d(x), 0, 32), OUT}}, {}, 10);
      submit_nop({{slice1d(ext1d(x), 16, 32), IN}}, {}, 11);
    }
  });
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.message.find("task #1 ('k_nop', AIV)"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("task #2 ('k_nop', AIV)"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("pass the TaskId of task #1 "), std::string::npos) << r.message;
  ASSERT_EQ(r.race_pairs.size(), 1u);
  EXPECT_EQ(r.race_pairs[0].first, first.value());
  EXPECT_GT(first.value(), 2u);
}

namespace {

// What the scope tests below allocate: 64 floats.
TensorCreateInfo f32_64() {
  const uint32_t shape[1] = {64};
  return TensorCreateInfo(shape, 1, DataType::FLOAT32);
}

// A tensor allocated (and written by a task submitted at prog.py:`line`) in a PTO2_SCOPE that
// has ended when this returns: the handle outlives its storage.
Tensor tensor_past_its_scope(int line) {
  std::optional<Tensor> kept;
  PTO2_SCOPE() {
    TaskOutputTensors o = alloc_tensors(f32_64());
    kept = o.get_ref(0);
    submit_nop({{*kept, OUT}}, {}, line);
  }
  return *kept;
}

}  // namespace

// A tensor the runtime allocated in a PTO2_SCOPE, used by a task submitted after that scope
// ended: its storage was reclaimed there. With the race check on, released storage is kept
// aside (not reused by the scopes after it), and the submission is refused naming the task.
// Found as a compiler defect: an if result in pl.scope() held such a tensor past the scope.
TEST(RaceChecker, ATensorUsedAfterItsScopeEndedIsReportedAtTheSubmission) {
  std::vector<float> x(64, 0);
  pto2::RunResult r = checked_runtime().run([&](const ChipStorageTaskArgs&) {
    Tensor kept = tensor_past_its_scope(10);
    for (int i = 0; i < 4; ++i) {
      PTO2_SCOPE() {   // allocations that would reuse the reclaimed storage
        TaskOutputTensors o = alloc_tensors(f32_64());
        submit_nop({{o.get_ref(0), OUT}}, {}, 11);
      }
    }
    submit_nop({{ext1d(x), OUT}, {kept, IN}}, {}, 12);
  });
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.message.find("(submitted at prog.py:12) uses argument 1"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("PTO2_SCOPE that has already ended"), std::string::npos) << r.message;
}

// The same tensor used inside its scope, and one allocated in an enclosing scope used after an
// inner one ended, are fine.
TEST(RaceChecker, TensorsUsedWhileTheirScopeIsOpenAreNotReported) {
  pto2::RunResult r = checked_runtime().run([&](const ChipStorageTaskArgs&) {
    const TensorCreateInfo ci = f32_64();
    PTO2_SCOPE() {
      TaskOutputTensors outer = alloc_tensors(ci);
      const Tensor& t = outer.get_ref(0);
      PTO2_SCOPE() {
        TaskOutputTensors inner = alloc_tensors(ci);
        submit_nop({{inner.get_ref(0), OUT}}, {}, 20);
        submit_nop({{t, OUT}, {inner.get_ref(0), IN}}, {}, 21);
      }
      for (int i = 0; i < 3; ++i) {
        PTO2_SCOPE() {
          TaskOutputTensors o = alloc_tensors(ci);
          submit_nop({{o.get_ref(0), OUT}}, {}, 22);
        }
      }
      submit_nop({{t, INOUT}}, {}, 23);
    }
  });
  EXPECT_TRUE(r.ok()) << r.message;
}

// get_tensor_data (pl.tensor.read) of such a tensor is refused the same way.
TEST(RaceChecker, AnElementReadAfterItsScopeEndedIsRefused) {
  pto2::RunResult r = checked_runtime().run([&](const ChipStorageTaskArgs&) {
    Tensor kept = tensor_past_its_scope(30);
    const int64_t idx[1] = {3};
    (void)get_tensor_data<float>(kept, 1, idx, "prog.py", 31);
  });
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.message.find("get_tensor_data at prog.py:31 reads an element of a tensor the runtime allocated in a "
                           "PTO2_SCOPE that has already ended"),
            std::string::npos)
      << r.message;
}

// Views of other layouts were compared by their byte intervals, so element-disjoint accesses
// through a transpose or a reshape were reported as a race (the run failed), and a transposed
// box was printed in the view's axis order as if it were the source's.
TEST(RaceChecker, ViewsOfOtherLayoutsConflictOnlyWhereTheyShareAnElement) {
  std::vector<float> x(32 * 32, 0);
  uint32_t sh[2] = {32, 32};
  auto run = [&](const std::function<Tensor(const Tensor&)>& writer, const std::function<Tensor(const Tensor&)>& reader) {
    return checked_runtime().run([&](const ChipStorageTaskArgs&) {
      const Tensor t = make_tensor_external(x.data(), sh, 2, DataType::FLOAT32);
      PTO2_SCOPE(PTO2ScopeMode::MANUAL) {
        submit_nop({{writer(t), OUT}}, {}, 10);
        submit_nop({{reader(t), IN}}, {}, 11);
      }
    });
  };
  auto box = [](const Tensor& t, uint32_t r0, uint32_t c0, uint32_t rows, uint32_t cols) {
    uint32_t s[2] = {rows, cols}, o[2] = {r0, c0};
    return t.view(s, o);
  };
  // x^T[0:16, 16:32] is x[16:32, 0:16]: disjoint from x[8:24, 16:32], overlapping x[20:24, 0:4].
  auto transposed = [&](const Tensor& t) { return box(t.transpose(0, 1), 0, 16, 16, 16); };
  pto2::RunResult r = run(transposed, [&](const Tensor& t) { return box(t, 8, 16, 16, 16); });
  EXPECT_TRUE(r.ok()) << r.message;
  r = run(transposed, [&](const Tensor& t) { return box(t, 20, 0, 4, 4); });
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.message.find("writes [16:32, 0:16]"), std::string::npos) << r.message;   // the source's order
  EXPECT_NE(r.message.find("overlap [20:24, 0:4]"), std::string::npos) << r.message;
  // x reshaped to [16, 64]: its [0:16, 16:32] is x[0:32:2, 16:32]; a dense row of x is disjoint
  // from it when it is an odd row, and a column window of x meets it on the even rows.
  auto reshaped = [&](const Tensor& t) {
    uint32_t s2[2] = {16, 64};
    return box(t.reshape(s2, 2), 0, 16, 16, 16);
  };
  r = run(reshaped, [&](const Tensor& t) { return box(t, 5, 0, 1, 32); });
  EXPECT_TRUE(r.ok()) << r.message;
  r = run(reshaped, [&](const Tensor& t) { return box(t, 1, 0, 8, 16); });
  EXPECT_TRUE(r.ok()) << r.message;   // rows 1..8 of x, columns 0:16: the reshape's even rows hold columns 16:32
  r = run(reshaped, [&](const Tensor& t) { return box(t, 4, 20, 1, 4); });
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.races, 1u);
}
