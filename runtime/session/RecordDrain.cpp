#include "runtime/session/RecordDrain.h"

#include <algorithm>

namespace sonde::session {

namespace {
constexpr uint64_t kWaitNs = 50'000'000; // also how often `stop_` is noticed
} // namespace

RecordOrigin relayOrigin(uint32_t ring, uint64_t owner) {
  return RecordOrigin{ring, static_cast<uint32_t>(owner >> 32),
                      static_cast<uint32_t>(owner & 0xffffffffu)};
}

RecordDrain::RecordDrain(const transport::RelayChannel &channel, ChunkSink &sink)
    : relay_(&channel), sink_(sink), lostSeen_(channel.ringCount(), 0) {
  relayConsumer_.emplace(channel);
}

RecordDrain::RecordDrain(const transport::NetlinkChannel &channel, ChunkSink &sink)
    : netlink_(&channel), sink_(sink) {
  netlinkConsumer_.emplace(channel);
}

RecordDrain::~RecordDrain() {
  stop_ = true;
  if (thread_.joinable())
    thread_.join();
}

void RecordDrain::start() {
  if (!relay_ || relay_->mode() != transport::RelayMode::Overwrite)
    thread_ = std::thread([this] { run(); });
}

void RecordDrain::run() {
  while (!stop_.load(std::memory_order_relaxed)) {
    // Relay: nothing filled within the wait, so the rings are quiet: read open
    // buffers too.
    bool ready = relay_ ? relayConsumer_->wait(kWaitNs) : netlinkConsumer_->wait(kWaitNs);
    round(!ready);
  }
}

void RecordDrain::round(bool partial) {
  std::lock_guard<std::mutex> g(mutex_);
  if (relay_) {
    auto take = [this](const transport::RelayChunk &c) {
      sink_.chunk(relayOrigin(c.ring, c.owner), c.data, c.size);
    };
    if (partial)
      relayConsumer_->flushAll(take);
    else
      relayConsumer_->poll(take);
    reportRelayLosses();
  } else {
    netlinkConsumer_->poll([this](const transport::NetlinkBatch &b) {
      RecordOrigin origin = netlinkOrigin(b.stream);
      if (b.lost > 0)
        sink_.lost(origin, b.lost);
      if (b.size > 0)
        sink_.chunk(origin, b.data, b.size);
    });
  }
  sink_.flush(); // a write per round, not per record
}

void RecordDrain::drainNow() { round(true); }

void RecordDrain::dumpRecent(const transport::RelayConsumer::Sink &sink) {
  std::lock_guard<std::mutex> g(mutex_);
  relayConsumer_->dumpRecent(sink);
  reportRelayLosses();
}

void RecordDrain::finish() {
  stop_ = true;
  if (thread_.joinable())
    thread_.join();
  round(true);
  if (netlink_) {
    uint64_t reported = netlinkConsumer_->totals().recordsLost;
    uint64_t lost = netlinkLost();
    if (lost > reported) {
      sink_.lost(RecordOrigin{netlinkStreams_.size(), 0, 0}, lost - reported);
      sink_.flush();
    }
  }
}

// Every record netlink producers lost: the shared count (which needs no
// message), or what messages reported where producers have none.
uint64_t RecordDrain::netlinkLost() const {
  uint64_t reported = netlinkConsumer_->totals().recordsLost;
  std::atomic<uint64_t> *shared = netlink_->lossCounter();
  return shared ? std::max(reported, shared->load(std::memory_order_relaxed)) : reported;
}

TransportTotals RecordDrain::totals() const {
  if (relay_) {
    transport::RelayCounters c = relay_->totals();
    return {c.recordsWritten, c.recordsLost, c.recordsOverwritten, c.bytesWritten, 0};
  }
  const transport::NetlinkTotals &t = netlinkConsumer_->totals();
  return {t.recordsDelivered, netlinkLost(), 0, t.bytes,
          t.malformed + t.missingMessages + t.overruns};
}

std::optional<std::string> RecordDrain::corruption() const {
  const values::CorruptionLatch &latch =
      relay_ ? relayConsumer_->corruption() : netlinkConsumer_->corruption();
  if (!latch.tripped())
    return std::nullopt;
  return latch.what();
}

// Losses the rings counted since the last round, per ring (its current owner).
void RecordDrain::reportRelayLosses() {
  for (uint32_t r = 0; r < relay_->ringCount(); ++r) {
    uint64_t lost = relay_->ringCounters(r).recordsLost;
    if (lost > lostSeen_[r]) {
      sink_.lost(relayOrigin(r, relay_->ring(r).owner.load(std::memory_order_relaxed)),
                 lost - lostSeen_[r]);
      lostSeen_[r] = lost;
    }
  }
}

// Each producer stream (a thread, a fork's new stream) decodes on its own.
RecordOrigin RecordDrain::netlinkOrigin(const transport::NetlinkStreamId &id) {
  auto [it, fresh] = netlinkStreams_.try_emplace(id, netlinkStreams_.size());
  return RecordOrigin{it->second, id.pid, id.tid};
}

} // namespace sonde::session
