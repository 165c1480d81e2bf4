// runtime.cpp — pto2::Runtime, the host API (a thin facade over Engine).
#include "engine.h"
#include "options_check.h"

namespace pto2 {

namespace {
const RuntimeOptions& checked_clusters(const RuntimeOptions& o) {
  detail::check_clusters(o, "RuntimeOptions");
  return o;
}
}  // namespace

Runtime::Runtime(const RuntimeOptions& options) : engine_(new detail::Engine(checked_clusters(options))) {}
Runtime::~Runtime() = default;

Runtime& Runtime::register_kernel(int32_t id, const std::string& name, CoreType core, PTO2KernelFn fn) {
  engine_->register_kernel(id, name, core, fn);
  return *this;
}

RunResult Runtime::run(const OrchestrationEntry& entry, const ChipStorageTaskArgs& args) { return engine_->run(entry, args); }

void Runtime::cancel() noexcept { engine_->cancel(); }

bool Runtime::write_trace(const std::string& path, std::string* error) const {
  return engine_->write_trace(path, error);
}
bool Runtime::write_graph(const std::string& path, std::string* error) const {
  return engine_->write_graph(path, error);
}
void Runtime::progress(uint64_t* submitted, uint64_t* completed) const noexcept {
  engine_->run_progress(submitted, completed);
}

const RuntimeOptions& Runtime::options() const { return engine_->options(); }
void Runtime::set_race_check(RaceCheck mode) { engine_->set_race_check(mode); }

}  // namespace pto2
