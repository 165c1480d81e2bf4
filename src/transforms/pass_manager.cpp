// The pass manager (pass.h): runs a flat list of passes, checks their declared contracts,
// verifies produced properties (verify mode) and dumps the printed IR after each pass.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "pypto/ir/error.h"
#include "pypto/ir/printer.h"
#include "pypto/transforms/pass.h"

namespace pypto::transforms {

using namespace ir;

PassOptions PassOptions::FromEnv() {
  PassOptions o;
  if (const char* d = std::getenv("PYPTO_DUMP_IR")) o.dump_dir = d;
  return o;
}

PassManager::PassManager(std::vector<Pass> passes, PassOptions options)
    : passes_(std::move(passes)), options_(std::move(options)) {}

namespace {

void dump(const std::string& dir, int index, const std::string& name, const ProgramPtr& p) {
  std::filesystem::create_directories(dir);
  char prefix[16];
  std::snprintf(prefix, sizeof prefix, "%02d_", index);
  std::filesystem::path path = std::filesystem::path(dir) / (std::string(prefix) + name + ".py");
  std::ofstream f(path);
  PYPTO_CHECK(f, "PYPTO_DUMP_IR: cannot write " << path.string());
  f << python_print(p);
}

}  // namespace

ProgramPtr PassManager::Run(const ProgramPtr& program) const {
  std::set<IRProperty> have = options_.assumed;
  ProgramPtr p = program;
  if (!options_.dump_dir.empty()) dump(options_.dump_dir, 0, "Input", p);
  int index = 1;
  for (const Pass& pass : passes_) {
    for (IRProperty r : pass.required) {
      PYPTO_CHECK(have.count(r), "pass " << pass.name << " requires " << to_string(r)
                                         << ", which no earlier pass produces");
    }
    p = pass.run(p);
    for (IRProperty prod : pass.produced) {
      if (options_.verify) {
        auto problems = VerifyProperty(prod, p);
        if (!problems.empty()) {
          std::ostringstream os;
          for (auto& m : problems) os << "\n  " << m;
          PYPTO_CHECK(false, "after pass " << pass.name << ", property " << to_string(prod) << " does not hold:" << os.str());
        }
      }
      have.insert(prod);
    }
    if (!options_.dump_dir.empty()) dump(options_.dump_dir, index, pass.name, p);
    ++index;
  }
  return p;
}

}  // namespace pypto::transforms
