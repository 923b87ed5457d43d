#include "runtime/session/RecordDrain.h"

namespace sonde::session {

namespace {
constexpr uint64_t kWaitNs = 50'000'000; // also how often `stop_` is noticed
} // namespace

RecordOrigin relayOrigin(uint32_t ring, uint64_t owner) {
  return RecordOrigin{ring, static_cast<uint32_t>(owner >> 32),
                      static_cast<uint32_t>(owner & 0xffffffffu)};
}

RecordDrain::RecordDrain(const transport::RelayChannel &channel, ChunkSink &sink)
    : channel_(channel), sink_(sink), consumer_(channel), lostSeen_(channel.ringCount(), 0) {}

RecordDrain::~RecordDrain() {
  stop_ = true;
  if (thread_.joinable())
    thread_.join();
}

void RecordDrain::start() {
  if (channel_.mode() != transport::RelayMode::Overwrite)
    thread_ = std::thread([this] { run(); });
}

void RecordDrain::run() {
  while (!stop_.load(std::memory_order_relaxed)) {
    // Nothing filled within the wait: the rings are quiet, read open buffers too.
    bool full = consumer_.wait(kWaitNs);
    round(!full);
  }
}

void RecordDrain::round(bool partial) {
  std::lock_guard<std::mutex> g(mutex_);
  auto take = [this](const transport::RelayChunk &c) {
    sink_.chunk(relayOrigin(c.ring, c.owner), c.data, c.size);
  };
  if (partial)
    consumer_.flushAll(take);
  else
    consumer_.poll(take);
  reportLosses();
  sink_.flush(); // a write per round, not per record
}

void RecordDrain::drainNow() { round(true); }

void RecordDrain::finish() {
  stop_ = true;
  if (thread_.joinable())
    thread_.join();
  round(true);
}

// Losses the rings counted since the last round, per ring (its current owner).
void RecordDrain::reportLosses() {
  for (uint32_t r = 0; r < channel_.ringCount(); ++r) {
    uint64_t lost = channel_.ringCounters(r).recordsLost;
    if (lost > lostSeen_[r]) {
      sink_.lost(relayOrigin(r, channel_.ring(r).owner.load(std::memory_order_relaxed)),
                 lost - lostSeen_[r]);
      lostSeen_[r] = lost;
    }
  }
}

} // namespace sonde::session
