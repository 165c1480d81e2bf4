// Helpers for the manual-dependency tests: Submit unpacking, spans, and a g++ compile check of
// generated orchestration code against the runtime header.
#pragma once
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

#include "../transforms/orch_test_util.h"
#include "pypto/codegen/orchestration.h"
#include "pypto/transforms/pass.h"
#include "pypto/transforms/passes.h"

namespace pypto::manual_test {

using namespace pypto::orch_test;

inline Span at_line(int line) {
  Span s;
  s.file = "prog.py";
  s.line = line;
  s.col = 5;
  s.end_line = line;
  s.end_col = 20;
  s.source_line = "    out, tid = pl.submit(...)";
  return s;
}

inline TypePtr TID() { return ScalarType::make(DataType::TASK_ID); }

// `out, tid = pl.submit(callee, args..., deps=deps)` for a one-result kernel: appends the three
// statements and returns {out, tid}.
struct Submitted {
  VarPtr out, tid;
};
inline Submitted submit(std::vector<StmtPtr>& body, const std::string& callee, std::vector<ExprPtr> args,
                        std::vector<ExprPtr> deps = {}, Span span = {}, ExprPtr predicate = nullptr,
                        const std::string& tid_name = "tid") {
  auto s = Submit::make(callee, std::move(args), {T16()}, std::move(deps), nullptr, false, false, -1, predicate, {}, span);
  auto tmp = V("r", s->type);
  Submitted r{Var::make("out", T16(), span), Var::make(tid_name, TID(), span)};
  body.push_back(AssignStmt::make(tmp, s, span));
  body.push_back(AssignStmt::make(r.out, TupleGetItem::make(tmp, 0), span));
  body.push_back(AssignStmt::make(r.tid, TupleGetItem::make(tmp, 1), span));
  return r;
}

inline codegen::OrchestrationResult generate(const ProgramPtr& p, const std::string& fn = "main") {
  return codegen::GenerateOrchestration(transforms::RunDefaultPipeline(p, transforms::PassOptions{}), fn);
}

inline ::testing::AssertionResult Compiles(const std::string& code, const std::string& tag) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("pypto_manual_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  fs::path src = dir / (tag + ".cpp"), obj = dir / (tag + ".o"), log = dir / (tag + ".log");
  std::ofstream(src) << code;
  std::string cmd = "g++ -std=c++17 -Wall -Werror -c -I " + std::string(PYPTO_RUNTIME_INCLUDE_DIR) + " " + src.string() +
                    " -o " + obj.string() + " > " + log.string() + " 2>&1";
  int rc = std::system(cmd.c_str());
  std::ifstream lf(log);
  std::string msg((std::istreambuf_iterator<char>(lf)), std::istreambuf_iterator<char>());
  if (rc == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << msg << "\n--- code ---\n" << code;
}

inline int count(const std::string& hay, const std::string& needle) {
  int n = 0;
  for (size_t p = hay.find(needle); p != std::string::npos; p = hay.find(needle, p + 1)) ++n;
  return n;
}

}  // namespace pypto::manual_test
