// StaticTaskGraphDot (src/transforms/static_task_graph.cpp) on the sample program: a loop of
// four submissions, each with deps=[previous TaskId] and an InOut of the same tensor. The
// Python tests (tests/python/test_static_graph.py) compare it with executed graphs; these
// check the C++ entry point alone: nodes, edge kinds, the dims it needs, its errors.
#include <gtest/gtest.h>

#include <string>

#include "../ir/sample_program.h"
#include "pypto/ir/error.h"
#include "pypto/transforms/pass.h"
#include "pypto/transforms/static_task_graph.h"

namespace {

using namespace pypto::ir;
using pypto::transforms::RunDefaultPipeline;
using pypto::transforms::StaticGraphInputs;
using pypto::transforms::StaticTaskGraphDot;

int count(const std::string& s, const std::string& sub) {
  int n = 0;
  for (size_t p = s.find(sub); p != std::string::npos; p = s.find(sub, p + 1)) ++n;
  return n;
}

TEST(StaticTaskGraph, LoopOfSubmissionsIsAChainOfExplicitEdges) {
  ProgramPtr prepared = RunDefaultPipeline(test::sample_program());
  StaticGraphInputs in;
  in.dims["M"] = 32;
  const std::string dot = StaticTaskGraphDot(*prepared, "main", in);
  EXPECT_EQ(dot.rfind("digraph pypto_tasks {\n  graph [static=true];\n", 0), 0u) << dot;
  EXPECT_EQ(count(dot, "kind=\"task\""), 4) << dot;
  EXPECT_NE(dot.find("t1 [label=\"k\\nAIV  #1\""), std::string::npos) << dot;
  // deps=[prev] and the InOut chain give the same edges: drawn as explicit (the stronger kind)
  for (const char* e : {"t1 -> t2", "t2 -> t3", "t3 -> t4"})
    EXPECT_NE(dot.find(std::string(e) + " [kind=\"explicit\""), std::string::npos) << e << "\n" << dot;
  EXPECT_EQ(count(dot, " -> "), 3) << dot;
}

TEST(StaticTaskGraph, TripCountFollowsTheProgram) {
  test::SampleOptions o;
  o.trip = 7;
  StaticGraphInputs in;
  in.dims["M"] = 32;
  EXPECT_EQ(count(StaticTaskGraphDot(*RunDefaultPipeline(test::sample_program(o)), "main", in), "kind=\"task\""), 7);
}

TEST(StaticTaskGraph, UnknownDynamicDimensionIsALocatedUserError) {
  ProgramPtr prepared = RunDefaultPipeline(test::sample_program());
  try {
    StaticTaskGraphDot(*prepared, "main", StaticGraphInputs{});
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_NE(e.message().find("'M' is known only when the program runs"), std::string::npos) << e.message();
    EXPECT_NE(e.help().find("dims="), std::string::npos) << e.help();
  }
}

TEST(StaticTaskGraph, OnlyOrchestrationsHaveAGraph) {
  ProgramPtr prepared = RunDefaultPipeline(test::sample_program());
  StaticGraphInputs in;
  in.dims["M"] = 32;
  EXPECT_THROW(StaticTaskGraphDot(*prepared, "k", in), UserError);
  EXPECT_THROW(StaticTaskGraphDot(*prepared, "nope", in), UserError);
}

}  // namespace
