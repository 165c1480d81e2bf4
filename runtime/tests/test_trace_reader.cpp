// pto2_trace_summary_read: the summary of a trace libpto2 wrote (pypto trace summary's fast path;
// tests/python/test_trace_summary.py checks it field by field against the Python reference).
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "pto2_trace_summary.h"
#include "test_util.h"

namespace {
std::string read_file(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

void write_file(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

std::string str(const pto2_trace_summary* s, int32_t i) { return std::string(s->string[i], s->string_len[i]); }

// A chain of `n` inc tasks on one tensor, traced, written to `path`.
void chain_trace(const std::string& path, int n) {
  std::vector<float> x(4, 0);
  pto2::Runtime rt(workers(2).trace(true));
  register_std(rt);
  pto2::RunResult r = rt.run([&](const ChipStorageTaskArgs&) {
    for (int i = 0; i < n; ++i) {
      Arg p;
      p.add_inout(ext1d(x));
      rt_submit_aiv_task(2, p);
    }
  });
  ASSERT_TRUE(r.ok()) << r.message;
  ASSERT_TRUE(rt.write_trace(path));
}
}  // namespace

TEST(TraceReader, ChainOfTasksIsItsOwnCriticalPath) {
  Watchdog wd(30);
  const std::string path = "pto2_trace_reader_chain.json";
  chain_trace(path, 200);
  char why[256] = "";
  const pto2_trace_summary* s = pto2_trace_summary_read(path.c_str(), why, sizeof why);
  ASSERT_NE(s, nullptr) << why;
  EXPECT_EQ(s->n_tasks, 200u);
  EXPECT_EQ(s->edges, 199u);
  ASSERT_EQ(s->n_critical, 200u);  // every task, in the chain's order
  for (uint64_t i = 0; i < s->n_critical; ++i) EXPECT_EQ(s->task_id[s->critical[i]], static_cast<int64_t>(i + 1));
  ASSERT_EQ(s->n_kernels, 1u);
  EXPECT_EQ(str(s, s->kernel_name[0]), "inc");
  EXPECT_EQ(s->kernel_tasks[0], 200u);
  uint64_t blocks = 0;
  for (uint32_t w = 0; w < s->n_workers; ++w) blocks += s->worker_blocks[w];
  EXPECT_EQ(blocks, 200u);
  for (uint64_t t = 1; t < s->n_tasks; ++t) EXPECT_LE(s->task_start_us[t - 1], s->task_start_us[t]);
  EXPECT_GT(s->span_us, 0.0);
  pto2_trace_summary_free(s);
  std::remove(path.c_str());
}

// Anything but trace.cpp's exact layout is refused (the caller reads it the general way).
TEST(TraceReader, RefusesOtherLayoutsNamingTheLine) {
  Watchdog wd(30);
  const std::string path = "pto2_trace_reader_other.json";
  chain_trace(path, 5);
  const std::string text = read_file(path);
  const struct {
    std::string text, why;
  } cases[] = {
      {text.substr(0, text.size() / 2), "line"},                                   // truncated
      {text + "x", "text after the event list"},                                   // garbage after it
      {"{\"traceEvents\":[\n" + text.substr(text.find('\n') + 1), "line 1:"},      // other spacing
      {text.substr(0, text.find("\n") + 1) + "\n" + text.substr(text.find("\n") + 1), "line 2:"},  // a blank line
      {std::string(text).replace(text.find("\"ts\":"), 5, "\"ts\":1e3,\"x\":"), "line"},  // an exponent
  };
  for (const auto& c : cases) {
    write_file(path, c.text);
    char why[256] = "";
    const pto2_trace_summary* s = pto2_trace_summary_read(path.c_str(), why, sizeof why);
    EXPECT_EQ(s, nullptr) << c.why;
    EXPECT_NE(std::string(why).find(c.why), std::string::npos) << why;
    pto2_trace_summary_free(s);
  }
  char why[256] = "";
  EXPECT_EQ(pto2_trace_summary_read("no/such/trace.json", why, sizeof why), nullptr);
  EXPECT_NE(std::string(why).find("cannot read no/such/trace.json"), std::string::npos) << why;
  std::remove(path.c_str());
}

// A named pipe is not opened (with no writer, opening it would wait for one): the caller reads it.
TEST(TraceReader, LeavesPipesUnopened) {
  Watchdog wd(30);
  const std::string path = "pto2_trace_reader_fifo";
  std::remove(path.c_str());
  ASSERT_EQ(mkfifo(path.c_str(), 0600), 0);
  char why[256] = "";
  EXPECT_EQ(pto2_trace_summary_read(path.c_str(), why, sizeof why), nullptr);
  EXPECT_NE(std::string(why).find("not a regular file"), std::string::npos) << why;
  std::remove(path.c_str());
}

// A time written `-0` is JSON's integer 0: +0.0, as Python's json reads it (the native reader
// gave -0.0, so `pypto trace summary` printed "at -0.0 us" where the Python readers print 0.0;
// found by the differential fuzz, tests/python/trace_fuzz.py). `-0.000` is a float: -0.0.
TEST(TraceReader, MinusZeroIsAnIntegerZeroUnlessItHasAFraction) {
  Watchdog wd(30);
  const std::string path = "pto2_trace_reader_minus_zero.json";
  chain_trace(path, 3);
  const std::string text = read_file(path);
  const size_t task = text.find("\"cat\":\"task\"");
  ASSERT_NE(task, std::string::npos);
  const size_t ts = text.find("\"ts\":", task) + 5, comma = text.find(',', ts);
  for (const char* zero : {"-0", "-0.000"}) {
    write_file(path, text.substr(0, ts) + zero + text.substr(comma));
    char why[256] = "";
    const pto2_trace_summary* s = pto2_trace_summary_read(path.c_str(), why, sizeof why);
    ASSERT_NE(s, nullptr) << why;
    ASSERT_GT(s->n_tasks, 0u);
    EXPECT_EQ(s->task_start_us[0], 0.0) << zero;   // the earliest task is the edited one
    EXPECT_EQ(std::signbit(s->task_start_us[0]), zero[2] == '.') << zero;
    pto2_trace_summary_free(s);
  }
  std::remove(path.c_str());
}

// Names are any std::string: a kernel name with bytes that are not UTF-8 (an overlong form, a
// surrogate, a lone 0xff), a quote, a backslash and control characters made the trace and the
// graph files invalid UTF-8 (pypto trace summary refused the trace; Graphviz warns). Each bad byte
// is now U+FFFD, as Python's errors="replace" decodes it.
TEST(TraceReader, KernelNamesThatAreNotUtf8AreWrittenAsValidText) {
  Watchdog wd(30);
  const std::string name = std::string("k\xff\"\\\x01\n\xc0\xaf\xed\xa0\x80") + "\xc3\xa9";
  const std::string want = "k\xef\xbf\xbd\"\\\x01\n" + std::string("\xef\xbf\xbd\xef\xbf\xbd") +
                           "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd" + "\xc3\xa9";
  std::vector<float> x(4, 0);
  pto2::Runtime rt(workers(1).trace(true).race_check(pto2::RaceCheck::Warn));
  rt.register_kernel(5, name, pto2::CoreType::AIV, &k_inc);
  pto2::RunResult r = rt.run([&](const ChipStorageTaskArgs&) {
    Arg p;
    p.add_inout(ext1d(x));
    rt_submit_aiv_task(5, p);
  });
  ASSERT_TRUE(r.ok()) << r.message;
  const std::string trace = "pto2_trace_reader_names.json", graph = "pto2_trace_reader_names.dot";
  ASSERT_TRUE(rt.write_trace(trace));
  ASSERT_TRUE(rt.write_graph(graph));
  char why[256] = "";
  const pto2_trace_summary* s = pto2_trace_summary_read(trace.c_str(), why, sizeof why);
  ASSERT_NE(s, nullptr) << why;   // valid UTF-8, in the reader's layout
  ASSERT_EQ(s->n_kernels, 1u);
  EXPECT_EQ(str(s, s->kernel_name[0]), want);
  pto2_trace_summary_free(s);
  const std::string dot = read_file(graph);
  EXPECT_NE(dot.find("label=\"k\xef\xbf\xbd\\\"\\\\ \\n\xef\xbf\xbd"), std::string::npos) << dot;
  for (unsigned char c : dot) EXPECT_TRUE(c >= 0x20 || c == '\n') << static_cast<int>(c);
  EXPECT_EQ(dot.find('\xff'), std::string::npos);
  std::remove(trace.c_str());
  std::remove(graph.c_str());
}

// Random byte edits of a real trace (bytes changed, cut, duplicated) are read or refused, never
// read out of bounds (run under make test-asan) nor accepted with another task count.
TEST(TraceReader, RandomEditsAreReadOrRefused) {
  Watchdog wd(120);
  const std::string path = "pto2_trace_reader_edits.json";
  chain_trace(path, 6);
  const std::string text = read_file(path);
  uint64_t seed = 27;
  auto next = [&seed](uint64_t n) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    return (seed >> 33) % n;
  };
  const char alphabet[] = "{}[]\",:\\u0123456789.-eE \n\xc3\xa9\xff";
  int accepted = 0;
  for (int i = 0; i < 1000; ++i) {
    std::string t = text;
    for (uint64_t k = 0, edits = 1 + next(3); k < edits; ++k) {
      const size_t at = next(t.size());
      switch (next(3)) {
        case 0: t[at] = alphabet[next(sizeof alphabet - 1)]; break;
        case 1: t.erase(at, 1 + next(8)); break;
        default: t.insert(at, t.substr(at, 1 + next(8))); break;
      }
    }
    write_file(path, t);
    const pto2_trace_summary* s = pto2_trace_summary_read(path.c_str(), nullptr, 0);
    if (s) {
      ++accepted;
      EXPECT_LE(s->n_tasks, 7u);   // an edit may split or merge a task id, not make many
      pto2_trace_summary_free(s);
    }
  }
  EXPECT_GT(accepted, 0);   // some edits (a digit of a time) keep the layout
  std::remove(path.c_str());
}
