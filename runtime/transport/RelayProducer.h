// One thread's writer into a relay channel. The hot path (reserve + commit) is
// inline, lock-free, allocation-free and makes no syscall; the slow path claims a
// ring on first use and moves to the next sub-buffer, waiting (bounded) only in
// block mode. Records never straddle sub-buffers: a record that does not fit in
// the rest of one leaves that rest as padding (past the slot's `used` bytes).
//
// A record's bytes and count are published to the slot on commit; the ring's
// counters of written records and bytes grow when a sub-buffer is handed over
// (RelayChannel::ringCounters adds the open one).
//
// Not thread-safe: each thread owns its producer (thread_local in the agent) and
// calls detach() before it exits. The channel must outlive its producers.
#pragma once

#include "runtime/transport/RecordCursor.h"
#include "runtime/transport/RelayChannel.h"

#include <cstdint>

namespace sonde::transport {

class RelayProducer {
public:
  explicit RelayProducer(const RelayChannel &channel)
      : channel_(channel), prefetchW_(cpuHasPrefetchW()) {}
  RelayProducer(const RelayProducer &) = delete;
  RelayProducer &operator=(const RelayProducer &) = delete;
  ~RelayProducer() { detach(); }

  // Room for one record of `bytes` (> 0), or null: the record is lost (and counted).
  // After a non-null result, write the record and call commit() before the next
  // reserve().
  char *reserve(uint32_t bytes) {
    if (bytes <= room()) {
      pending_ = bytes;
      // Ownership of a line ahead, asked for early (RecordCursor.h). A hint:
      // it never faults, also past the sub-buffer's end.
      if (prefetchW_)
        __asm__ volatile("prefetchw %0" ::"m"(cursor_.next[SONDE_RECORD_PREFETCH_DISTANCE]));
      return reinterpret_cast<char *>(cursor_.next);
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
    cursor_.next += pending_;
    slot_->used.store(used(), std::memory_order_release);
    slot_->records.store(slot_->records.load(std::memory_order_relaxed) + 1,
                         std::memory_order_relaxed);
    cursor_.limit = inlineAppends_ ? end_ : nullptr;
  }

  // After reserve(): whether the record opens its sub-buffer.
  bool atBufferStart() const { return cursor_.next == cursor_.base; }

  // The cursor generated code appends records through (RecordCursor.h), and its
  // record stream, which the writer encodes with too. Inline appends are
  // allowed once allowInlineAppends() was called (a TSC trace clock), from the
  // second record of each sub-buffer on (the first carries the full time).
  sonde_record_cursor &cursor() { return cursor_; }
  void allowInlineAppends() { inlineAppends_ = true; }

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
  // CPUID's PREFETCHW bit (some early x86-64 processors fault on it).
  static bool cpuHasPrefetchW();
  uint32_t room() const { return static_cast<uint32_t>(end_ - cursor_.next); }
  uint32_t used() const { return static_cast<uint32_t>(cursor_.next - cursor_.base); }
  char *reserveSlow(uint32_t bytes);
  bool claim();
  void adoptOpenSubbuf();
  bool openSubbuf();
  void enterSubbuf(RelaySlotHeader &slot, uint32_t used);
  void leaveSubbuf();
  bool waitForRoom();
  void publish();
  char *lose();

  const RelayChannel &channel_;
  const bool prefetchW_;
  RelayRingHeader *ring_ = nullptr;
  RelaySlotHeader *slot_ = nullptr; // the open sub-buffer's slot, or null
  // next: where the next record goes; base: the open sub-buffer (else null).
  sonde_record_cursor cursor_{};
  uint8_t *end_ = nullptr; // the open sub-buffer's end (null without one)
  uint32_t pending_ = 0;   // size of the reserved record
  uint32_t head_ = 0;      // the sub-buffer number being filled
  int ringIndex_ = -1;
  uint32_t claimBackoff_ = 0; // records to drop before looking for a ring again
  bool inlineAppends_ = false;
  // Copies of the ring's counters (this thread is their only writer).
  uint64_t lost_ = 0, overwritten_ = 0;
};

} // namespace sonde::transport
