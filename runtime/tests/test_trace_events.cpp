// The trace's orchestrator and scheduler events, checked on the parsed JSON: a task skipped by its
// predicate is an instant event naming the predicate, every submission is a span on the
// orchestrator's track, and every PTO2_SCOPE is a span with its mode.
#include <gtest/gtest.h>

#include <cctype>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>

#include "test_util.h"

namespace {
// A small JSON reader (objects, arrays, strings without \u escapes, numbers, literals).
struct JValue {
  enum Kind { kNull, kBool, kNum, kStr, kArr, kObj } kind = kNull;
  double num = 0;
  std::string str;
  std::vector<JValue> arr;
  std::map<std::string, JValue> obj;
  bool has(const std::string& k) const { return kind == kObj && obj.count(k) != 0; }
  const JValue& at(const std::string& k) const { return obj.at(k); }
};

struct JParser {
  const std::string& s;
  size_t i = 0;
  bool ok = true;
  void ws() { while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i; }
  char peek() { ws(); return i < s.size() ? s[i] : '\0'; }
  std::string string() {
    std::string o;
    if (peek() != '"') { ok = false; return o; }
    for (++i; i < s.size() && s[i] != '"'; ++i) {
      if (s[i] == '\\') ++i;
      if (i < s.size()) o += s[i];
    }
    if (i >= s.size()) ok = false;
    ++i;
    return o;
  }
  JValue value() {
    JValue v;
    const char c = peek();
    if (c == '{') {
      v.kind = JValue::kObj;
      ++i;
      if (peek() == '}') { ++i; return v; }
      while (ok) {
        std::string k = string();
        if (peek() != ':') { ok = false; break; }
        ++i;
        v.obj[k] = value();
        if (peek() == ',') { ++i; continue; }
        if (peek() == '}') { ++i; break; }
        ok = false;
      }
    } else if (c == '[') {
      v.kind = JValue::kArr;
      ++i;
      if (peek() == ']') { ++i; return v; }
      while (ok) {
        v.arr.push_back(value());
        if (peek() == ',') { ++i; continue; }
        if (peek() == ']') { ++i; break; }
        ok = false;
      }
    } else if (c == '"') {
      v.kind = JValue::kStr;
      v.str = string();
    } else if (s.compare(i, 4, "true") == 0 || s.compare(i, 5, "false") == 0) {
      v.kind = JValue::kBool;
      v.num = s[i] == 't';
      i += s[i] == 't' ? 4 : 5;
    } else if (s.compare(i, 4, "null") == 0) {
      i += 4;
    } else {
      size_t used = 0;
      try {
        v.num = std::stod(s.substr(i, 32), &used);
      } catch (...) {
        ok = false;
      }
      v.kind = JValue::kNum;
      i += used;
      if (used == 0) ok = false;
    }
    return v;
  }
};

// Writes the runtime's trace, parses it and returns its traceEvents (fails the test when invalid).
std::vector<JValue> trace_events(pto2::Runtime& rt, const std::string& path) {
  EXPECT_TRUE(rt.write_trace(path));
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string text = ss.str();
  std::remove(path.c_str());
  JParser p{text};
  JValue doc = p.value();
  EXPECT_TRUE(p.ok && p.peek() == '\0') << "invalid JSON near offset " << p.i;
  if (!p.ok || !doc.has("traceEvents")) return {};
  return doc.at("traceEvents").arr;
}

std::vector<const JValue*> with_cat(const std::vector<JValue>& ev, const std::string& cat) {
  std::vector<const JValue*> out;
  for (const JValue& e : ev)
    if (e.has("cat") && e.at("cat").str == cat) out.push_back(&e);
  return out;
}

int64_t orchestrator_tid(const std::vector<JValue>& ev) {
  for (const JValue& e : ev)
    if (e.has("ph") && e.at("ph").str == "M" && e.at("args").at("name").str == "orchestrator")
      return static_cast<int64_t>(e.at("tid").num);
  return -1;
}
}  // namespace

TEST(TraceEvents, SkippedTaskIsAnInstantEventWithItsPredicate) {
  for (uint32_t w = 1; w <= 2; ++w) {
    Watchdog wd(30);
    std::vector<int32_t> flag(4, 0);
    std::vector<float> x(8, 0), y(8, 0);
    pto2::Runtime rt(workers(w).trace(true));
    register_std(rt);
    uint64_t skipped_id = 0;
    pto2::RunResult r = rt.run([&](const ChipStorageTaskArgs&) {
      Arg f;  // flag[2] = 5
      f.add_output(ext1d(flag));
      rt_submit_aiv_task(20, f);
      Arg p;  // runs iff flag[2] == 0: skipped
      p.add_output(ext1d(x));
      p.add_input(ext1d(flag));
      p.add_scalar(1);
      p.add_scalar(0);
      p.set_predicate(CoreTaskPredicate(ext1d(flag), {2}, PredicateOp::EQ, 0));
      skipped_id = rt_submit_aiv_task(0, p).task_id().raw;
      submit_add(ext1d(x), ext1d(y), 10);
    });
    ASSERT_TRUE(r.ok()) << r.message;
    ASSERT_EQ(r.tasks_skipped, 1u);
    const std::vector<JValue> ev = trace_events(rt, "pto2_trace_events_skip_" + std::to_string(w) + ".json");
    const auto skips = with_cat(ev, "skip");
    ASSERT_EQ(skips.size(), 1u);
    const JValue& s = *skips[0];
    EXPECT_EQ(s.at("ph").str, "i");
    EXPECT_EQ(s.at("name").str, "fill");
    EXPECT_EQ(static_cast<uint64_t>(s.at("args").at("task_id").num), skipped_id);
    EXPECT_EQ(s.at("args").at("element").num, 2);
    EXPECT_EQ(s.at("args").at("op").str, "==");
    EXPECT_EQ(s.at("args").at("target").num, 0);
    EXPECT_GE(s.at("ts").num, 0);
    // its track is a declared thread (a worker or the orchestrator)
    bool declared = false;
    for (const JValue& e : ev)
      if (e.at("ph").str == "M" && e.at("name").str == "thread_name" && e.at("tid").num == s.at("tid").num) declared = true;
    EXPECT_TRUE(declared);
    // the skipped task did not run: no task span for it, the others have theirs
    for (const JValue* t : with_cat(ev, "task")) EXPECT_NE(static_cast<uint64_t>(t->at("args").at("task_id").num), skipped_id);
    EXPECT_EQ(with_cat(ev, "task").size(), 2u);
  }
}

TEST(TraceEvents, OneSubmitSpanPerSubmissionOnTheOrchestratorTrack) {
  Watchdog wd(30);
  std::vector<float> x(8, 0), y(8, 0);
  pto2::Runtime rt(workers(2).trace(true));
  register_std(rt);
  std::vector<uint64_t> ids;
  pto2::RunResult r = rt.run([&](const ChipStorageTaskArgs&) {
    Arg a;
    a.add_output(ext1d(x));
    a.add_scalar(1);
    a.add_scalar(0);
    ids.push_back(rt_submit_aiv_task(0, a).task_id().raw);
    ids.push_back(submit_add(ext1d(x), ext1d(y), 1).raw);
    Arg c;
    c.launch_spec.set_block_num(2);
    ids.push_back(rt_submit_aic_task(13, c).task_id().raw);
    Arg d;
    ids.push_back(rt_submit_dummy_task(d).task_id().raw);
  });
  ASSERT_TRUE(r.ok()) << r.message;
  const std::vector<JValue> ev = trace_events(rt, "pto2_trace_events_submit.json");
  const int64_t orch = orchestrator_tid(ev);
  ASSERT_GE(orch, 0);
  const auto subs = with_cat(ev, "submit");
  ASSERT_EQ(subs.size(), ids.size());
  double prev_end = -1;
  for (size_t k = 0; k < subs.size(); ++k) {
    const JValue& s = *subs[k];
    EXPECT_EQ(s.at("ph").str, "X");
    EXPECT_EQ(static_cast<int64_t>(s.at("tid").num), orch);
    EXPECT_EQ(static_cast<uint64_t>(s.at("args").at("task_id").num), ids[k]);
    EXPECT_GE(s.at("dur").num, 0);
    EXPECT_GE(s.at("ts").num, prev_end);  // one after the other, in submission order
    prev_end = s.at("ts").num + s.at("dur").num;
  }
  EXPECT_EQ(subs[0]->at("name").str, "submit fill");
  EXPECT_EQ(subs[3]->at("name").str, "submit dummy");
}

TEST(TraceEvents, OneSpanPerScopeWithItsModeEnclosingItsSubmissions) {
  Watchdog wd(30);
  std::vector<float> x(8, 0), y(8, 0);
  pto2::Runtime rt(workers(1).trace(true));
  register_std(rt);
  pto2::RunResult r = rt.run([&](const ChipStorageTaskArgs&) {
    PTO2_SCOPE() {
      submit_fill(ext1d(x), 1);
      PTO2_SCOPE(PTO2ScopeMode::MANUAL) {
        Arg d;
        rt_submit_dummy_task(d);
      }
    }
    submit_add(ext1d(x), ext1d(y), 1);
  });
  ASSERT_TRUE(r.ok()) << r.message;
  const std::vector<JValue> ev = trace_events(rt, "pto2_trace_events_scope.json");
  const int64_t orch = orchestrator_tid(ev);
  const auto scopes = with_cat(ev, "scope");
  ASSERT_EQ(scopes.size(), 2u);  // the run's implicit outermost scope has none
  const JValue* outer = nullptr;
  const JValue* inner = nullptr;
  for (const JValue* s : scopes) {
    EXPECT_EQ(s->at("ph").str, "X");
    EXPECT_EQ(static_cast<int64_t>(s->at("tid").num), orch);
    (s->at("args").at("mode").str == "AUTO" ? outer : inner) = s;
  }
  ASSERT_TRUE(outer && inner);
  EXPECT_EQ(inner->at("args").at("mode").str, "MANUAL");
  auto begin = [](const JValue* e) { return e->at("ts").num; };
  auto end = [](const JValue* e) { return e->at("ts").num + e->at("dur").num; };
  EXPECT_LE(begin(outer), begin(inner));
  EXPECT_GE(end(outer), end(inner));
  const auto subs = with_cat(ev, "submit");
  ASSERT_EQ(subs.size(), 3u);
  EXPECT_TRUE(begin(subs[0]) >= begin(outer) && end(subs[0]) <= end(outer));   // fill: in the AUTO scope
  EXPECT_TRUE(begin(subs[1]) >= begin(inner) && end(subs[1]) <= end(inner));   // dummy: in the MANUAL one
  EXPECT_GE(begin(subs[2]), end(outer));                                         // add: after both
}

TEST(TraceEvents, NoOrchestratorEventsWithoutTracing) {
  std::vector<float> x(8, 0);
  pto2::Runtime rt(workers(1));
  register_std(rt);
  pto2::RunResult r = rt.run([&](const ChipStorageTaskArgs&) {
    PTO2_SCOPE() { submit_fill(ext1d(x), 1); }
  });
  ASSERT_TRUE(r.ok()) << r.message;
  const std::vector<JValue> ev = trace_events(rt, "pto2_trace_events_off.json");
  EXPECT_TRUE(with_cat(ev, "submit").empty());
  EXPECT_TRUE(with_cat(ev, "scope").empty());
}
