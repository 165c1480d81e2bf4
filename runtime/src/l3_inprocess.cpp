// l3_inprocess.cpp — see l3_inprocess.h.
#include "l3_inprocess.h"

#include <exception>

namespace pto2 {

L3InProcessTransport::~L3InProcessTransport() {
  for (std::thread& t : threads_)
    if (t.joinable()) t.join();
}

void L3InProcessTransport::begin(L3Executor& ex) {
  if (!threads_.empty()) return;  // started by the first run, serve every later one
  for (uint32_t c = 0; c < chips_; ++c) threads_.emplace_back([this, &ex, c] { serve(&ex, c); });
}

void L3InProcessTransport::stop(L3Executor&) {
  for (std::thread& t : threads_)
    if (t.joinable()) t.join();
  threads_.clear();
}

void L3InProcessTransport::serve(L3Executor* ex, uint32_t chip) {
  L3Dispatch task;
  // A task queued behind the one this chip just ran comes first (a chain stays on its chip).
  while (ex->next_early(chip, task) || ex->next(task, -1)) {
    ex->placed(task.index, chip);
    L3Completion done;
    done.index = task.index;
    done.chip = chip;
    done.start_us = ex->now_us();
    try {
      done.result = ex->run_local(chip, task.target_id, *task.args);
      if (!done.result.ok()) done.error = done.result.message;
    } catch (const std::exception& e) {
      done.error = e.what();
    } catch (...) {
      done.error = "unknown exception";
    }
    done.end_us = ex->now_us();
    ex->complete(std::move(done));
  }
}

}  // namespace pto2
