#include "runtime/transport/RelayConsumer.h"

#include "runtime/transport/SharedFutex.h"

#include <algorithm>

namespace sonde::transport {

RelayConsumer::RelayConsumer(const RelayChannel &channel)
    : channel_(channel), readOffset_(channel.ringCount(), 0) {
  copy_.resize(channel.header().subbufSize);
}

size_t RelayConsumer::poll(const Sink &sink) {
  if (channel_.mode() == RelayMode::Overwrite)
    return 0;
  size_t chunks = 0;
  for (uint32_t r = 0; r < channel_.ringCount(); ++r)
    chunks += drainRing(r, false, sink);
  return chunks;
}

bool RelayConsumer::wait(uint64_t timeoutNs) {
  RelayHeader &h = channel_.header();
  // Publish "waiting" before re-checking, so a producer that fills a sub-buffer
  // after the check sees the flag and wakes us (or changes wakeSeq first).
  h.consumerWaiting.store(1, std::memory_order_seq_cst);
  uint32_t seq = h.wakeSeq.load(std::memory_order_seq_cst);
  bool ready = anyFull();
  if (!ready)
    futexWait(h.wakeSeq, seq, timeoutNs);
  h.consumerWaiting.store(0, std::memory_order_relaxed);
  return ready || anyFull();
}

size_t RelayConsumer::flushAll(const Sink &sink) {
  if (channel_.mode() == RelayMode::Overwrite)
    return dumpRecent(sink);
  size_t chunks = 0;
  for (uint32_t r = 0; r < channel_.ringCount(); ++r)
    chunks += drainRing(r, true, sink);
  return chunks;
}

size_t RelayConsumer::dumpRecent(const Sink &sink) {
  const RelayHeader &h = channel_.header();
  size_t chunks = 0;
  for (uint32_t r = 0; r < channel_.ringCount(); ++r) {
    uint32_t head = channel_.ring(r).head.load(std::memory_order_acquire);
    // The open sub-buffer `head` and the subbufCount - 1 full ones before it.
    uint32_t first = head - std::min(head, h.subbufCount - 1);
    for (uint32_t n = first; n != head + 1; ++n) {
      RelaySlotHeader &s = channel_.slot(r, n);
      if (s.subbuf.load(std::memory_order_acquire) != n)
        continue;
      uint32_t used = std::min(s.used.load(std::memory_order_acquire), h.subbufSize);
      std::copy_n(channel_.slotData(r, n), used, copy_.data());
      std::atomic_thread_fence(std::memory_order_acquire);
      if (s.subbuf.load(std::memory_order_relaxed) != n || used == 0)
        continue;
      sink(RelayChunk{r, s.owner.load(std::memory_order_relaxed), copy_.data(), used});
      ++chunks;
    }
  }
  return chunks;
}

size_t RelayConsumer::drainRing(uint32_t r, bool partial, const Sink &sink) {
  RelayRingHeader &ring = channel_.ring(r);
  uint32_t tail = ring.tail.load(std::memory_order_relaxed);
  uint32_t head = ring.head.load(std::memory_order_acquire);
  uint32_t &offset = readOffset_[r];
  // Clamped: a misbehaving target must not make sonde read outside a slot.
  const uint32_t size = channel_.header().subbufSize;
  size_t chunks = 0;
  for (; tail != head; ++tail) {
    RelaySlotHeader &s = channel_.slot(r, tail);
    uint32_t used = std::min(s.used.load(std::memory_order_acquire), size);
    if (used > offset) {
      sink(RelayChunk{r, s.owner.load(std::memory_order_relaxed),
                      channel_.slotData(r, tail) + offset, used - offset});
      ++chunks;
    }
    offset = 0;
    releaseSubbuf(ring, tail + 1);
  }
  if (partial) {
    // The producer's open sub-buffer: read its committed records, keep the slot
    // (the producer may append more; the next read starts after these).
    RelaySlotHeader &s = channel_.slot(r, tail);
    if (s.subbuf.load(std::memory_order_acquire) == tail) {
      uint32_t used = std::min(s.used.load(std::memory_order_acquire), size);
      if (used > offset) {
        sink(RelayChunk{r, s.owner.load(std::memory_order_relaxed),
                        channel_.slotData(r, tail) + offset, used - offset});
        ++chunks;
        offset = used;
      }
    }
  }
  return chunks;
}

void RelayConsumer::releaseSubbuf(RelayRingHeader &ring, uint32_t next) {
  // seq_cst store then load, against the producer's flag store then tail load:
  // either it sees the new tail or we see it waiting.
  ring.tail.store(next, std::memory_order_seq_cst);
  if (ring.producerWaiting.load(std::memory_order_seq_cst))
    futexWakeAll(ring.tail);
  RelayHeader &h = channel_.header();
  if (h.consumerStalled.load(std::memory_order_relaxed))
    h.consumerStalled.store(0, std::memory_order_relaxed);
}

bool RelayConsumer::anyFull() const {
  for (uint32_t r = 0; r < channel_.ringCount(); ++r) {
    const RelayRingHeader &ring = channel_.ring(r);
    if (ring.head.load(std::memory_order_seq_cst) != ring.tail.load(std::memory_order_relaxed))
      return true;
  }
  return false;
}

} // namespace sonde::transport
