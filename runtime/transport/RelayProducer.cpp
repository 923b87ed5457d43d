#include "runtime/transport/RelayProducer.h"

#include "runtime/transport/SharedFutex.h"

namespace sonde::transport {

namespace {
// With every ring taken, looking again on each record would cost a scan (and
// syscalls for dead owners) per record; drop this many first.
constexpr uint32_t kClaimRetryInterval = 1024;
} // namespace

char *RelayProducer::reserveSlow(uint32_t bytes) {
  if (!ring_ && !claim()) {
    channel_.header().unclaimedLost.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
  }
  if (bytes > channel_.header().subbufSize)
    return lose();
  if (slot_ && bytes <= room_) {
    pending_ = bytes;
    return cursor_;
  }
  if (slot_)
    publish();
  if (!openSubbuf())
    return lose();
  pending_ = bytes;
  return cursor_;
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
  written_ = ring_->recordsWritten.load(std::memory_order_relaxed);
  lost_ = ring_->recordsLost.load(std::memory_order_relaxed);
  overwritten_ = ring_->recordsOverwritten.load(std::memory_order_relaxed);
  bytes_ = ring_->bytesWritten.load(std::memory_order_relaxed);
  adoptOpenSubbuf();
  return true;
}

// A previous owner (released, or dead) may have left sub-buffer `head` open:
// continue after its committed records, which the consumer may have read already.
void RelayProducer::adoptOpenSubbuf() {
  RelaySlotHeader &s = channel_.slot(uint32_t(ringIndex_), head_);
  if (s.subbuf.load(std::memory_order_acquire) != head_)
    return;
  slot_ = &s;
  used_ = s.used.load(std::memory_order_relaxed);
  slotRecords_ = s.records.load(std::memory_order_relaxed);
  cursor_ = channel_.slotData(uint32_t(ringIndex_), head_) + used_;
  room_ = channel_.header().subbufSize - used_;
}

bool RelayProducer::openSubbuf() {
  const RelayHeader &h = channel_.header();
  if (h.mode != RelayMode::Overwrite) {
    uint32_t tail = ring_->tail.load(std::memory_order_acquire);
    if (head_ - tail >= h.subbufCount && !waitForRoom())
      return false;
  }
  RelaySlotHeader &s = channel_.slot(uint32_t(ringIndex_), head_);
  if (h.mode == RelayMode::Overwrite &&
      s.subbuf.load(std::memory_order_relaxed) == head_ - h.subbufCount) {
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
  slot_ = &s;
  used_ = 0;
  slotRecords_ = 0;
  cursor_ = channel_.slotData(uint32_t(ringIndex_), head_);
  room_ = h.subbufSize;
  return true;
}

// Block mode: sleeps until the consumer frees a sub-buffer, at most the channel's
// timeout. A timeout marks the consumer stalled so that no producer waits again
// until it releases something: a dead consumer never hangs the target.
bool RelayProducer::waitForRoom() {
  RelayHeader &h = channel_.header();
  if (h.mode != RelayMode::Block || h.consumerStalled.load(std::memory_order_relaxed))
    return false;
  uint64_t deadline = monotonicNs() + h.blockTimeoutNs;
  bool room = false;
  ring_->producerWaiting.store(1, std::memory_order_seq_cst);
  for (;;) {
    uint32_t tail = ring_->tail.load(std::memory_order_seq_cst);
    if (head_ - tail < h.subbufCount) {
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
  ring_->head.store(++head_, std::memory_order_release);
  slot_ = nullptr;
  cursor_ = nullptr;
  room_ = 0;
  RelayHeader &h = channel_.header();
  h.wakeSeq.fetch_add(1, std::memory_order_seq_cst);
  if (h.consumerWaiting.load(std::memory_order_seq_cst))
    futexWakeAll(h.wakeSeq);
}

char *RelayProducer::lose() {
  ring_->recordsLost.store(++lost_, std::memory_order_relaxed);
  return nullptr;
}

void RelayProducer::flush() {
  if (slot_ && used_ > 0)
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
  slot_ = nullptr;
  cursor_ = nullptr;
  room_ = 0;
  ringIndex_ = -1;
  claimBackoff_ = 0;
}

} // namespace sonde::transport
