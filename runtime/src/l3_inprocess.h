// l3_inprocess.h — the in-process L3 transport: each chip is a thread driving a libpto2
// Runtime of this process. The threads live as long as the transport (a run costs no thread
// start) and park on the executor's ready queue between tasks.
#pragma once

#include <memory>
#include <thread>
#include <vector>

#include "pto_l3_api.h"

namespace pto2 {

class L3InProcessTransport : public L3Transport {
 public:
  /// `auto t = std::make_shared<L3InProcessTransport>(2);` — two chips.
  explicit L3InProcessTransport(uint32_t chips) : chips_(chips == 0 ? 1 : chips) {}
  ~L3InProcessTransport() override;
  uint32_t chips() const override { return chips_; }
  void begin(L3Executor& ex) override;
  void end() override {}
  /// Stops the chip threads (they return once L3Executor::next returns false for good).
  void stop(L3Executor& ex);

 private:
  void serve(L3Executor* ex, uint32_t chip);
  uint32_t chips_;
  std::vector<std::thread> threads_;
};

}  // namespace pto2
