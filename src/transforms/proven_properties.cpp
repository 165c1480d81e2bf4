// RecordProvenProperties / PropertyProven (ir_property.h): which properties the pass manager
// verified on the program object it returned, so codegen does not verify them a second time
// (a full walk of the program each).
#include <cstdint>
#include <mutex>
#include <vector>

#include "pypto/transforms/ir_property.h"

namespace pypto::transforms {

namespace {

struct ProvenEntry {
  std::weak_ptr<const ir::Program> program;
  const ir::Program* address;   // identity while `program` is alive
  uint64_t bits;
};

constexpr size_t kRemembered = 16;   // a few pipelines' results (one per compile in flight)
std::mutex g_mutex;
std::vector<ProvenEntry> g_entries;   // oldest first

uint64_t bit(IRProperty p) { return uint64_t{1} << static_cast<unsigned>(p); }

}  // namespace

void RecordProvenProperties(const ir::ProgramPtr& program, const std::vector<IRProperty>& proven) {
  if (!program) return;
  uint64_t bits = 0;
  for (IRProperty p : proven) {
    if (static_cast<unsigned>(p) < 64) bits |= bit(p);
  }
  std::lock_guard<std::mutex> lock(g_mutex);
  std::vector<ProvenEntry> kept;   // drop expired entries and any older record of this program
  for (auto& e : g_entries) {
    if (e.program.expired()) continue;
    if (e.address == program.get()) continue;
    kept.push_back(std::move(e));
  }
  if (kept.size() >= kRemembered) kept.erase(kept.begin());
  kept.push_back({program, program.get(), bits});
  g_entries = std::move(kept);
}

bool PropertyProven(IRProperty p, const ir::ProgramPtr& program) {
  if (!program || static_cast<unsigned>(p) >= 64) return false;
  std::lock_guard<std::mutex> lock(g_mutex);
  for (auto& e : g_entries) {
    if (e.address != program.get()) continue;
    ir::ProgramPtr alive = e.program.lock();   // expired: a different program reuses the address
    return alive && alive.get() == program.get() && (e.bits & bit(p));
  }
  return false;
}

}  // namespace pypto::transforms
