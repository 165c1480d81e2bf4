// The Chrome trace is well-formed JSON with task spans, flow arrows and timing-slot spans.
#include <gtest/gtest.h>

#include <cctype>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "pto2_c_api.h"
#include "test_util.h"

namespace {
// Minimal JSON validator (RFC 8259 subset sufficient for the trace).
struct Json {
  const std::string& s;
  size_t i = 0;
  void ws() { while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i; }
  bool lit(const char* l) { size_t n = std::strlen(l); if (s.compare(i, n, l) == 0) { i += n; return true; } return false; }
  bool str() {
    if (s[i] != '"') return false;
    for (++i; i < s.size(); ++i) {
      if (s[i] == '\\') { ++i; continue; }
      if (s[i] == '"') { ++i; return true; }
    }
    return false;
  }
  bool num() {
    size_t st = i;
    if (s[i] == '-') ++i;
    while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.' || s[i] == 'e' || s[i] == 'E' || s[i] == '+' || s[i] == '-')) ++i;
    return i > st;
  }
  bool value() {
    ws();
    if (i >= s.size()) return false;
    bool ok;
    if (s[i] == '{') {
      ++i; ws();
      if (s[i] == '}') { ++i; return true; }
      for (;;) {
        ws(); if (!str()) return false; ws();
        if (s[i++] != ':') return false;
        if (!value()) return false;
        ws();
        if (s[i] == ',') { ++i; continue; }
        if (s[i] == '}') { ++i; return true; }
        return false;
      }
    } else if (s[i] == '[') {
      ++i; ws();
      if (s[i] == ']') { ++i; return true; }
      for (;;) {
        if (!value()) return false;
        ws();
        if (s[i] == ',') { ++i; continue; }
        if (s[i] == ']') { ++i; return true; }
        return false;
      }
    } else if (s[i] == '"') {
      ok = str();
    } else if (lit("true") || lit("false") || lit("null")) {
      ok = true;
    } else {
      ok = num();
    }
    return ok;
  }
};
size_t count(const std::string& s, const std::string& sub) {
  size_t n = 0;
  for (size_t p = s.find(sub); p != std::string::npos; p = s.find(sub, p + 1)) ++n;
  return n;
}
}  // namespace

TEST(Trace, WellFormedWithSpansFlowsAndSlots) {
  for (uint32_t w = 1; w <= 4; ++w) {
    Watchdog wd(30);
    std::vector<float> x(8, 0), y(8, 0);
    pto2::Runtime rt(workers(w).trace(true));
    register_std(rt);
    pto2::RunResult r = rt.run([&](const ChipStorageTaskArgs&) {
      Arg a;
      a.add_output(ext1d(x));
      a.add_scalar(1);
      a.add_scalar(2);
      a.set_task_timing_slot(4);
      rt_submit_aiv_task(0, a);
      submit_add(ext1d(x), ext1d(y), 1);
      Arg s;
      s.launch_spec.set_block_num(3);
      rt_submit_aic_task(13, s);
    });
    ASSERT_TRUE(r.ok()) << r.message;
    const std::string path = "pto2_trace_test_" + std::to_string(w) + ".json";
    ASSERT_TRUE(rt.write_trace(path));
    std::ifstream f(path);
    std::stringstream ss;
    ss << f.rdbuf();
    const std::string j = ss.str();
    Json p{j};
    EXPECT_TRUE(p.value()) << "invalid JSON near offset " << p.i;
    EXPECT_NE(j.find("\"traceEvents\""), std::string::npos);
    EXPECT_EQ(count(j, "\"name\":\"fill\""), 1u);
    EXPECT_EQ(count(j, "\"name\":\"add\""), 1u);
    EXPECT_EQ(count(j, "\"name\":\"empty_c\""), 3u);  // one span per block
    // add reads fill's x: one arrow, linked edge or not (fill may have retired before add's
    // submission: a traced run still finds the dependency, DependencyLinker::recording_live).
    EXPECT_EQ(count(j, "\"ph\":\"s\""), 1u);
    EXPECT_EQ(count(j, "\"ph\":\"f\""), 1u);
    EXPECT_LE(r.auto_edges, 1u);
    EXPECT_EQ(count(j, "\"name\":\"timing_slot_4\""), 1u);
    EXPECT_NE(j.find("\"task_id\":"), std::string::npos);
    std::remove(path.c_str());
  }
}

TEST(Trace, EveryTaskAppearsEvenWhenTheOrchestratorRanIt) {
  for (uint32_t w = 1; w <= 4; ++w) {
    Watchdog wd(30);
    pto2::Runtime rt(workers(w).trace(true).task_ring_size(8));
    register_std(rt);
    std::vector<float> x(4, 0);
    pto2::RunResult r = rt.run([&](const ChipStorageTaskArgs&) {
      for (int i = 0; i < 300; ++i) {
        Arg p;
        p.add_inout(ext1d(x));
        rt_submit_aiv_task(2, p);
      }
    });
    ASSERT_TRUE(r.ok()) << r.message;
    const std::string path = "pto2_trace_all_" + std::to_string(w) + ".json";
    ASSERT_TRUE(rt.write_trace(path));
    std::ifstream f(path);
    std::stringstream ss;
    ss << f.rdbuf();
    const std::string j = ss.str();
    Json p{j};
    EXPECT_TRUE(p.value());
    EXPECT_EQ(count(j, "\"cat\":\"task\""), 300u);
    // one arrow per dependency of the chain, linked (producer live) or not (producer already
    // retired): the 299 of the program, whatever the schedule
    EXPECT_EQ(count(j, "\"ph\":\"s\""), 299u);
    EXPECT_LE(r.auto_edges, 299u);
    std::remove(path.c_str());
  }
}

// A producer the orchestrator has seen finish (get_tensor_data waited for it) before its
// consumer is submitted: untraced, the tracker prunes it (no dependency: nothing to wait for);
// traced, the dependency is found, so the trace's arrows and critical path are the program's.
TEST(Trace, ArrowsDoNotDependOnTheSchedule) {
  for (bool trace : {false, true}) {
    Watchdog wd(30);
    std::vector<float> x(8, 0), y(8, 0);
    pto2::Runtime rt(workers(2).trace(trace));
    register_std(rt);
    pto2::RunResult r = rt.run([&](const ChipStorageTaskArgs&) {
      submit_fill(ext1d(x), 3.0f);
      const int64_t idx[1] = {0};
      EXPECT_EQ(get_tensor_data<float>(ext1d(x), 1, idx), 3.0f);  // fill has finished
      submit_add(ext1d(x), ext1d(y), 1);
    });
    ASSERT_TRUE(r.ok()) << r.message;
    EXPECT_EQ(r.auto_edges, 0u);  // nothing left to wait for: no edge linked
    if (!trace) continue;
    const std::string path = "pto2_trace_schedule.json";
    ASSERT_TRUE(rt.write_trace(path));
    std::ifstream f(path);
    std::stringstream ss;
    ss << f.rdbuf();
    EXPECT_EQ(count(ss.str(), "\"ph\":\"s\""), 1u);  // fill -> add
    std::remove(path.c_str());
  }
}

// A trace numbers its run's tasks from 1 (as messages do), though ids count on across runs.
TEST(Trace, TaskIdsCountFromOneInEachRun) {
  Watchdog wd(30);
  std::vector<float> x(8, 0), y(8, 0);
  pto2::Runtime rt(workers(2).trace(true));
  register_std(rt);
  for (int k = 0; k < 3; ++k) {
    pto2::RunResult r = rt.run([&](const ChipStorageTaskArgs&) {
      for (int i = 0; i < 4; ++i) submit_add(ext1d(x), ext1d(y), 1);
    });
    ASSERT_TRUE(r.ok()) << r.message;
  }
  const std::string path = "pto2_trace_numbers_test.json";
  ASSERT_TRUE(rt.write_trace(path));
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string j = ss.str();
  std::remove(path.c_str());
  EXPECT_NE(j.find("\"task_id\":1,"), std::string::npos) << j;
  EXPECT_NE(j.find("\"task_id\":4,"), std::string::npos) << j;
  EXPECT_EQ(j.find("\"task_id\":5"), std::string::npos) << j;
}

// A trace or task graph that cannot be written says where and why (the OS's reason), not just
// false: a missing directory at open, a full disk (/dev/full) at the final flush. The graph's
// flush happened in the stream's destructor, unchecked: /dev/full was reported written.
TEST(Trace, WriteFailuresNameThePathAndTheReason) {
  Watchdog wd(30);
  std::vector<float> x(8, 0), y(8, 0);
  pto2::Runtime rt(workers(2).trace(true).race_check(pto2::RaceCheck::Warn));
  register_std(rt);
  pto2::RunResult r = rt.run([&](const ChipStorageTaskArgs&) { submit_add(ext1d(x), ext1d(y), 1); });
  ASSERT_TRUE(r.ok()) << r.message;
  const std::string missing = "pto2_no_such_dir_for_trace_test/t.json";
  std::string error;
  EXPECT_FALSE(rt.write_trace(missing, &error));
  EXPECT_EQ(error, "could not write the trace to " + missing + ": No such file or directory");
  error.clear();
  EXPECT_FALSE(rt.write_graph(missing, &error));
  EXPECT_EQ(error, "could not write the task graph to " + missing + ": No such file or directory");
  EXPECT_FALSE(rt.write_trace(missing));   // no message wanted
  std::ifstream full("/dev/full");
  if (!full) GTEST_SKIP() << "no /dev/full";
  error.clear();
  EXPECT_FALSE(rt.write_trace("/dev/full", &error));
  EXPECT_EQ(error, "could not write the trace to /dev/full: No space left on device");
  error.clear();
  EXPECT_FALSE(rt.write_graph("/dev/full", &error));
  EXPECT_EQ(error, "could not write the task graph to /dev/full: No space left on device");
  char buf[512] = "";
  EXPECT_EQ(pto2_runtime_write_graph_err(&rt, "/dev/full", buf, sizeof buf), 0);
  EXPECT_STREQ(buf, "could not write the task graph to /dev/full: No space left on device");
  EXPECT_EQ(pto2_runtime_write_trace_err(&rt, missing.c_str(), buf, sizeof buf), 0);
  EXPECT_EQ(std::string(buf), "could not write the trace to " + missing + ": No such file or directory");
  EXPECT_EQ(pto2_runtime_write_graph(&rt, "/dev/full"), 0);
  const std::string ok = "pto2_trace_write_ok_test.json";
  EXPECT_EQ(pto2_runtime_write_trace_err(&rt, ok.c_str(), buf, sizeof buf), 1);
  EXPECT_STREQ(buf, "");
  std::remove(ok.c_str());
}

TEST(Trace, GraphNotRecordedSaysSo) {
  Watchdog wd(30);
  std::vector<float> x(8, 0), y(8, 0);
  pto2::Runtime rt(workers(2));
  register_std(rt);
  ASSERT_TRUE(rt.run([&](const ChipStorageTaskArgs&) { submit_add(ext1d(x), ext1d(y), 1); }).ok());
  std::string error;
  EXPECT_FALSE(rt.write_graph("g.dot", &error));
  EXPECT_NE(error.find("no task graph to write to g.dot: the last run did not record one"), std::string::npos) << error;
}
