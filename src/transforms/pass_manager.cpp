// The pass manager (pass.h): runs a flat list of passes, enforces their contracts (required /
// produced / invalidated properties), verifies produced properties and well-formedness, and
// dumps the printed IR after each pass.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "pypto/ir/error.h"
#include "pypto/ir/printer.h"
#include "pypto/transforms/pass.h"
#include "pypto/transforms/well_formed.h"

namespace pypto::transforms {

using namespace ir;

PassOptions PassOptions::FromEnv() {
  PassOptions o;
  if (const char* d = std::getenv("PYPTO_DUMP_IR")) o.dump_dir = d;
  if (const char* v = std::getenv("PYPTO_VERIFY_PASSES")) o.verify_well_formed = *v && std::string(v) != "0";
  if (const char* v = std::getenv("PYPTO_TIME_PASSES")) o.time_passes = *v && std::string(v) != "0";
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

// CPU seconds of the calling thread (a busy machine's waiting is not the pass's cost).
double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

bool contains(const std::vector<IRProperty>& v, IRProperty p) { return std::find(v.begin(), v.end(), p) != v.end(); }

// InternalError listing `problems` when non-empty.
void expect_none(const std::vector<std::string>& problems, const std::string& what) {
  if (problems.empty()) return;
  std::ostringstream os;
  for (auto& m : problems) os << "\n  " << m;
  PYPTO_CHECK(false, what << ":" << os.str());
}

// A pass may not declare one property as both produced and invalidated.
void check_contract(const Pass& pass) {
  for (IRProperty p : pass.produced) {
    PYPTO_CHECK(!contains(pass.invalidated, p),
                "pass " << pass.name << " declares " << to_string(p) << " as both produced and invalidated");
  }
}

// After `pass` ran, giving `p`: verify what it produces and (well-formed mode) what it claims
// to keep. The fixed-point property of a pass that returned its input object (`unchanged`)
// holds without re-running that pass (FixedPointPassOf).
void verify_after(const Pass& pass, bool unchanged, const ProgramPtr& p, const std::set<IRProperty>& kept,
                  const PassOptions& o) {
  if (o.verify && !pass.checks_produced) {   // (a verifier pass checked them as it ran)
    for (IRProperty prod : pass.produced) {
      const char* rerun = FixedPointPassOf(prod);
      if (unchanged && rerun && pass.name == rerun) continue;
      expect_none(VerifyProperty(prod, p), "after pass " + pass.name + ", property " + to_string(prod) + " does not hold");
    }
  }
  if (o.verify_well_formed) {
    expect_none(VerifyWellFormed(p), "after pass " + pass.name + ", the IR is not well formed");
    for (IRProperty k : kept) {
      expect_none(VerifyProperty(k, p), "pass " + pass.name + " broke property " + std::string(to_string(k)) +
                                            " without declaring it invalidated");
    }
  }
}

}  // namespace

ProgramPtr PassManager::Run(const ProgramPtr& program) const {
  std::set<IRProperty> have = options_.assumed;
  std::map<IRProperty, std::string> invalidated_by;
  std::set<IRProperty> proven;   // verified after the pass that produced it, not invalidated since
  ProgramPtr p = program;
  CheckNestingDepth(p);   // before anything recursive (the dump prints the IR)
  if (!options_.dump_dir.empty()) dump(options_.dump_dir, 0, "Input", p);
  if (options_.verify_well_formed) expect_none(VerifyWellFormed(p), "the input program is not well formed");
  int index = 1;
  for (const Pass& pass : passes_) {
    check_contract(pass);
    for (IRProperty r : pass.required) {
      auto inv = invalidated_by.find(r);
      PYPTO_CHECK(have.count(r), "pass " << pass.name << " requires " << to_string(r)
                                         << (inv != invalidated_by.end() ? ", which pass " + inv->second + " invalidated"
                                                                         : std::string(", which no earlier pass produces")));
    }
    const double start = options_.time_passes ? thread_cpu_seconds() : 0.0;
    ProgramPtr out = pass.run(p);
    const bool unchanged = out == p;
    p = std::move(out);   // (frees the input here when the pass rebuilt it)
    for (IRProperty i : pass.invalidated) {
      if (have.erase(i)) invalidated_by[i] = pass.name;
      proven.erase(i);
    }
    std::set<IRProperty> kept;
    for (IRProperty h : have) {
      if (!contains(pass.produced, h)) kept.insert(h);
    }
    verify_after(pass, unchanged, p, kept, options_);
    if (options_.time_passes) {
      std::fprintf(stderr, "pypto: pass %-32s %9.3f ms\n", pass.name.c_str(), 1e3 * (thread_cpu_seconds() - start));
    }
    for (IRProperty prod : pass.produced) {
      have.insert(prod);
      invalidated_by.erase(prod);
      if (options_.verify) proven.insert(prod);
    }
    if (!options_.dump_dir.empty()) dump(options_.dump_dir, index, pass.name, p);
    ++index;
  }
  RecordProvenProperties(p, std::vector<IRProperty>(proven.begin(), proven.end()));   // codegen skips these checks
  return p;
}

ProgramPtr RunPass(const Pass& pass, const ProgramPtr& program, const PassOptions& options) {
  check_contract(pass);
  for (IRProperty r : pass.required) {
    expect_none(VerifyProperty(r, program), "pass " + pass.name + " requires " + to_string(r) + ", which its input lacks");
  }
  if (options.verify_well_formed) expect_none(VerifyWellFormed(program), "the input program is not well formed");
  ProgramPtr p = pass.run(program);
  verify_after(pass, p == program, p, {}, options);
  return p;
}

}  // namespace pypto::transforms
