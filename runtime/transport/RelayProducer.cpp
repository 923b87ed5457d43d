#include "runtime/transport/RelayProducer.h"

#include "runtime/transport/SharedFutex.h"

#include <algorithm>
#include <cpuid.h>

namespace sonde::transport {

namespace {
// With every ring taken, looking again on each record would cost a scan (and
// syscalls for dead owners) per record; drop this many first.
constexpr uint32_t kClaimRetryInterval = 1024;

// Full sub-buffers in a ring at which its producer wakes the consumer.
uint32_t wakeWatermark(uint32_t subbufCount) { return subbufCount / 2; }
} // namespace

bool RelayProducer::cpuHasPrefetchW() {
  static const bool has = [] {
    unsigned a, b, c, d;
    return __get_cpuid(0x80000001, &a, &b, &c, &d) && (c >> 8 & 1); // PRFCHW / 3DNowPrefetch
  }();
  return has;
}

char *RelayProducer::reserveSlow(uint32_t bytes) {
  if (!ring_ && !claim()) {
    channel_.header().unclaimedLost.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
  }
  if (bytes > channel_.subbufSize())
    return lose();
  if (slot_ && bytes <= room()) {
    pending_ = bytes;
    return reinterpret_cast<char *>(cursor_.next);
  }
  if (slot_)
    publish();
  if (!openSubbuf())
    return lose();
  pending_ = bytes;
  return reinterpret_cast<char *>(cursor_.next);
}

bool RelayProducer::claim() {
  if (claimBackoff_ > 0) {
    --claimBackoff_;
    return false;
  }
  int r = channel_.claimRing();
  if (r < 0) {
    claimBackoff_ = kClaimRetryInterval;
    return false;
  }
  ringIndex_ = r;
  ring_ = &channel_.ring(uint32_t(r));
  head_ = ring_->head.load(std::memory_order_relaxed);
  lost_ = ring_->recordsLost.load(std::memory_order_relaxed);
  overwritten_ = ring_->recordsOverwritten.load(std::memory_order_relaxed);
  adoptOpenSubbuf();
  return true;
}

// A previous owner (released, or dead) may have left sub-buffer `head` open:
// continue after its committed records, which the consumer may have read already.
void RelayProducer::adoptOpenSubbuf() {
  RelaySlotHeader &s = channel_.slot(uint32_t(ringIndex_), head_);
  if (s.subbuf.load(std::memory_order_acquire) != head_)
    return;
  enterSubbuf(s, std::min(s.used.load(std::memory_order_relaxed), channel_.subbufSize()));
  // Its stream's time state is the dead owner's: start ours with a full timestamp.
  cursor_.stream.started = 0;
}

void RelayProducer::enterSubbuf(RelaySlotHeader &slot, uint32_t used) {
  slot_ = &slot;
  cursor_.base = reinterpret_cast<uint8_t *>(channel_.slotData(uint32_t(ringIndex_), head_));
  cursor_.next = cursor_.base + used;
  cursor_.used = reinterpret_cast<uint32_t *>(&slot.used);
  cursor_.records = reinterpret_cast<uint32_t *>(&slot.records);
  cursor_.limit = nullptr; // until the first record
  end_ = cursor_.base + channel_.subbufSize();
}

void RelayProducer::leaveSubbuf() {
  slot_ = nullptr;
  cursor_.next = cursor_.base = cursor_.limit = end_ = nullptr;
  cursor_.used = cursor_.records = nullptr;
}

bool RelayProducer::openSubbuf() {
  const RelayConfig &c = channel_.config();
  if (c.mode != RelayMode::Overwrite) {
    uint32_t tail = ring_->tail.load(std::memory_order_acquire);
    if (head_ - tail >= c.subbufCount && !waitForRoom())
      return false;
  }
  RelaySlotHeader &s = channel_.slot(uint32_t(ringIndex_), head_);
  if (c.mode == RelayMode::Overwrite &&
      s.subbuf.load(std::memory_order_relaxed) == head_ - c.subbufCount) {
    overwritten_ += s.records.load(std::memory_order_relaxed);
    ring_->recordsOverwritten.store(overwritten_, std::memory_order_relaxed);
  }
  s.used.store(0, std::memory_order_relaxed);
  s.records.store(0, std::memory_order_relaxed);
  s.owner.store(ring_->owner.load(std::memory_order_relaxed), std::memory_order_relaxed);
  s.subbuf.store(head_, std::memory_order_release);
  // A flight-recorder dump copies slots while we write: the new number must be
  // visible before the new bytes (it re-checks the number after copying).
  std::atomic_thread_fence(std::memory_order_release);
  enterSubbuf(s, 0);
  return true;
}

// Block mode: sleeps until the consumer frees a sub-buffer, at most the channel's
// timeout. A timeout marks the consumer stalled so that no producer waits again
// until it releases something: a dead consumer never hangs the target.
bool RelayProducer::waitForRoom() {
  RelayHeader &h = channel_.header();
  const RelayConfig &c = channel_.config();
  if (c.mode != RelayMode::Block || h.consumerStalled.load(std::memory_order_relaxed))
    return false;
  uint64_t deadline = monotonicNs() + c.blockTimeoutNs;
  bool room = false;
  ring_->producerWaiting.store(1, std::memory_order_seq_cst);
  for (;;) {
    uint32_t tail = ring_->tail.load(std::memory_order_seq_cst);
    if (head_ - tail < c.subbufCount) {
      room = true;
      break;
    }
    uint64_t now = monotonicNs();
    if (now >= deadline) {
      h.consumerStalled.store(1, std::memory_order_relaxed);
      break;
    }
    if (h.consumerStalled.load(std::memory_order_relaxed))
      break;
    futexWait(ring_->tail, tail, deadline - now);
  }
  ring_->producerWaiting.store(0, std::memory_order_relaxed);
  return room;
}

void RelayProducer::publish() {
  // Only this thread writes the ring's counters; readers add the open slot's.
  ring_->recordsWritten.store(ring_->recordsWritten.load(std::memory_order_relaxed) +
                                  slot_->records.load(std::memory_order_relaxed),
                              std::memory_order_relaxed);
  ring_->bytesWritten.store(ring_->bytesWritten.load(std::memory_order_relaxed) + used(),
                            std::memory_order_relaxed);
  ring_->head.store(++head_, std::memory_order_release);
  leaveSubbuf();
  // A wakeup costs both sides a context switch (tens of us in a VM): the
  // consumer is woken once half the ring is full, and reads the rest on its own
  // (it sleeps only when no sub-buffer is full, and at most its poll interval).
  RelayHeader &h = channel_.header();
  uint32_t full = head_ - ring_->tail.load(std::memory_order_relaxed);
  if (full < wakeWatermark(channel_.subbufCount()))
    return;
  h.wakeSeq.fetch_add(1, std::memory_order_seq_cst);
  if (h.consumerWaiting.load(std::memory_order_seq_cst))
    futexWakeAll(h.wakeSeq);
}

char *RelayProducer::lose() {
  ring_->recordsLost.store(++lost_, std::memory_order_relaxed);
  return nullptr;
}

void RelayProducer::flush() {
  if (slot_ && used() > 0)
    publish();
}

void RelayProducer::detach() {
  if (!ring_)
    return;
  flush();
  channel_.releaseRing(uint32_t(ringIndex_));
  forgetAfterFork();
}

void RelayProducer::forgetAfterFork() {
  ring_ = nullptr;
  leaveSubbuf();
  ringIndex_ = -1;
  claimBackoff_ = 0;
}

} // namespace sonde::transport
