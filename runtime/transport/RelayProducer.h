// One thread's writer into a relay channel. The hot path (reserve + commit) is
// inline, lock-free, allocation-free and makes no syscall; the slow path claims a
// ring on first use and moves to the next sub-buffer, waiting (bounded) only in
// block mode. Records never straddle sub-buffers: a record that does not fit in
// the rest of one leaves that rest as padding (past the slot's `used` bytes).
//
// Not thread-safe: each thread owns its producer (thread_local in the agent) and
// calls detach() before it exits. The channel must outlive its producers.
#pragma once

#include "runtime/transport/RelayChannel.h"

#include <cstdint>

namespace sonde::transport {

class RelayProducer {
public:
  explicit RelayProducer(const RelayChannel &channel) : channel_(channel) {}
  RelayProducer(const RelayProducer &) = delete;
  RelayProducer &operator=(const RelayProducer &) = delete;
  ~RelayProducer() { detach(); }

  // Room for one record of `bytes` (> 0), or null: the record is lost (and counted).
  // After a non-null result, write the record and call commit() before the next
  // reserve().
  char *reserve(uint32_t bytes) {
    if (bytes <= room_) {
      pending_ = bytes;
      return cursor_;
    }
    return reserveSlow(bytes);
  }

  // Commits only the first `bytes` (<= reserved) of the reservation: records are
  // reserved at their bound and encoded shorter.
  void commit(uint32_t bytes) {
    pending_ = bytes;
    commit();
  }
  void commit() {
    cursor_ += pending_;
    room_ -= pending_;
    used_ += pending_;
    bytes_ += pending_;
    slot_->used.store(used_, std::memory_order_release);
    slot_->records.store(++slotRecords_, std::memory_order_relaxed);
    ring_->recordsWritten.store(++written_, std::memory_order_relaxed);
    ring_->bytesWritten.store(bytes_, std::memory_order_relaxed);
  }

  // After reserve(): whether the record opens its sub-buffer.
  bool atBufferStart() const { return used_ == 0; }

  // Hands the partly filled sub-buffer to the consumer now.
  void flush();
  // Flushes and frees the ring (thread exit).
  void detach();
  // In a fork() child: the inherited ring belongs to the parent's thread, which
  // keeps writing it. Forget it without touching it; the next record claims anew.
  void forgetAfterFork();

  // The claimed ring, or -1.
  int ring() const { return ringIndex_; }

private:
  char *reserveSlow(uint32_t bytes);
  bool claim();
  void adoptOpenSubbuf();
  bool openSubbuf();
  bool waitForRoom();
  void publish();
  char *lose();

  const RelayChannel &channel_;
  RelayRingHeader *ring_ = nullptr;
  RelaySlotHeader *slot_ = nullptr; // the open sub-buffer's slot, or null
  char *cursor_ = nullptr;          // where the next record goes
  uint32_t room_ = 0;               // bytes left in the open sub-buffer
  uint32_t pending_ = 0;            // size of the reserved record
  uint32_t used_ = 0;               // committed bytes in the open sub-buffer
  uint32_t slotRecords_ = 0;
  uint32_t head_ = 0; // the sub-buffer number being filled
  int ringIndex_ = -1;
  uint32_t claimBackoff_ = 0; // records to drop before looking for a ring again
  // Copies of the ring's counters (this thread is their only writer).
  uint64_t written_ = 0, lost_ = 0, overwritten_ = 0, bytes_ = 0;
};

} // namespace sonde::transport
