#include "runtime/transport/RelayConsumer.h"

#include "runtime/transport/SharedFutex.h"
#include "runtime/values/ProcessIdentity.h"

#include <algorithm>
#include <ctime>

namespace sonde::transport {

namespace {

// A futex wait that ends this early with nothing to read was a wake-up no
// producer meant (a target bumping the word): pause before looking again, so
// that such writes cannot keep the consumer spinning.
constexpr uint64_t kEarlyWakeNs = 100'000;
constexpr uint64_t kEarlyWakePauseNs = 1'000'000;

std::string ringName(const RelayChannel &channel, uint32_t r) {
  uint64_t owner = channel.ring(r).owner.load(std::memory_order_relaxed);
  return "relay ring " + std::to_string(r) + " (last written by pid " +
         std::to_string(owner >> 32) + " tid " + std::to_string(owner & 0xffffffffu) + ")";
}

} // namespace

RelayConsumer::RelayConsumer(const RelayChannel &channel)
    : channel_(channel), tail_(channel.ringCount()), readOffset_(channel.ringCount(), 0),
      damaged_(channel.ringCount(), 0) {
  for (uint32_t r = 0; r < channel.ringCount(); ++r)
    tail_[r] = channel.ring(r).tail.load(std::memory_order_relaxed);
  copy_.resize(channel.subbufSize());
}

bool RelayConsumer::headerIntact() {
  if (headerDamaged_)
    return false;
  if (const char *field = channel_.overwrittenHeaderField()) {
    corruption_.note(std::string("the relay channel's header: its static field '") + field +
                     "' was overwritten");
    headerDamaged_ = true;
    std::fill(damaged_.begin(), damaged_.end(), 1);
    return false;
  }
  return true;
}

void RelayConsumer::damage(uint32_t r, const std::string &what) {
  damaged_[r] = 1;
  corruption_.note(ringName(channel_, r) + ": " + what);
}

std::optional<RelayConsumer::SlotView> RelayConsumer::readSlot(uint32_t r, uint32_t subbuf,
                                                               const RelaySlotHeader &s) {
  uint32_t used = s.used.load(std::memory_order_acquire);
  uint64_t owner = s.owner.load(std::memory_order_relaxed);
  std::string what = "sub-buffer " + std::to_string(subbuf);
  if (used > channel_.subbufSize())
    damage(r, what + " says it holds " + std::to_string(used) + " bytes, more than its " +
                  std::to_string(channel_.subbufSize()));
  else if (!values::plausiblePid(static_cast<uint32_t>(owner >> 32)) ||
           !values::plausiblePid(static_cast<uint32_t>(owner)))
    // The writer's pid and tid name its stream (and a -b trace's file).
    damage(r, what + " names pid " + std::to_string(owner >> 32) + " tid " +
                  std::to_string(owner & 0xffffffffu) + " as its writer, no thread's ids");
  else
    return SlotView{used, owner};
  return std::nullopt;
}

size_t RelayConsumer::poll(const Sink &sink) {
  if (channel_.mode() == RelayMode::Overwrite || !headerIntact())
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
  if (!ready) {
    uint64_t start = monotonicNs();
    futexWait(h.wakeSeq, seq, timeoutNs);
    uint64_t slept = monotonicNs() - start;
    if (slept < kEarlyWakeNs && !anyFull()) {
      timespec pause{0, static_cast<long>(std::min(kEarlyWakePauseNs, timeoutNs))};
      nanosleep(&pause, nullptr);
    }
  }
  h.consumerWaiting.store(0, std::memory_order_relaxed);
  return ready || anyFull();
}

size_t RelayConsumer::flushAll(const Sink &sink) {
  if (channel_.mode() == RelayMode::Overwrite)
    return dumpRecent(sink);
  if (!headerIntact())
    return 0;
  size_t chunks = 0;
  for (uint32_t r = 0; r < channel_.ringCount(); ++r)
    chunks += drainRing(r, true, sink);
  return chunks;
}

size_t RelayConsumer::dumpRecent(const Sink &sink) {
  const RelayConfig &h = channel_.config();
  if (!headerIntact())
    return 0;
  size_t chunks = 0;
  for (uint32_t r = 0; r < channel_.ringCount(); ++r) {
    if (damaged_[r])
      continue;
    uint32_t head = channel_.ring(r).head.load(std::memory_order_acquire);
    // The slots hold the open sub-buffer `head` and the subbufCount - 1 full
    // ones before it; or, when no sub-buffer is open (its producer handed the
    // last one over and left), the subbufCount full ones before it. Numbers
    // head - subbufCount and head share a slot: the check below takes the one
    // it holds, so the records counted written and not overwritten are all here.
    uint32_t first = head - std::min(head, h.subbufCount);
    for (uint32_t n = first; n != head + 1; ++n) {
      RelaySlotHeader &s = channel_.slot(r, n);
      if (s.subbuf.load(std::memory_order_acquire) != n)
        continue;
      std::optional<SlotView> slot = readSlot(r, n, s);
      if (!slot)
        break;
      std::copy_n(channel_.slotData(r, n), slot->used, copy_.data());
      std::atomic_thread_fence(std::memory_order_acquire);
      if (s.subbuf.load(std::memory_order_relaxed) != n || slot->used == 0)
        continue;
      sink(RelayChunk{r, slot->owner, copy_.data(), slot->used});
      ++chunks;
    }
  }
  return chunks;
}

size_t RelayConsumer::drainRing(uint32_t r, bool partial, const Sink &sink) {
  if (damaged_[r])
    return 0;
  RelayRingHeader &ring = channel_.ring(r);
  uint32_t tail = tail_[r];
  uint32_t head = ring.head.load(std::memory_order_acquire);
  uint32_t &offset = readOffset_[r];
  if (head - tail > channel_.subbufCount()) {
    damage(r, "its producer is at sub-buffer " + std::to_string(head) + ", more than " +
                  std::to_string(channel_.subbufCount()) + " ahead of the consumer's " +
                  std::to_string(tail));
    return 0;
  }
  size_t chunks = 0;
  for (; tail != head; ++tail) {
    RelaySlotHeader &s = channel_.slot(r, tail);
    uint32_t number = s.subbuf.load(std::memory_order_acquire);
    if (number != tail) {
      damage(r, "the slot of full sub-buffer " + std::to_string(tail) + " holds number " +
                    std::to_string(number));
      return chunks;
    }
    std::optional<SlotView> slot = readSlot(r, tail, s);
    if (!slot)
      return chunks;
    if (slot->used > offset) {
      sink(RelayChunk{r, slot->owner, channel_.slotData(r, tail) + offset, slot->used - offset});
      ++chunks;
    }
    offset = 0;
    releaseSubbuf(r, tail + 1);
  }
  if (partial) {
    // The producer's open sub-buffer: read its committed records, keep the slot
    // (the producer may append more; the next read starts after these).
    RelaySlotHeader &s = channel_.slot(r, tail);
    if (s.subbuf.load(std::memory_order_acquire) == tail) {
      std::optional<SlotView> slot = readSlot(r, tail, s);
      if (slot && slot->used > offset) {
        sink(RelayChunk{r, slot->owner, channel_.slotData(r, tail) + offset, slot->used - offset});
        ++chunks;
        offset = slot->used;
      }
    }
  }
  return chunks;
}

void RelayConsumer::releaseSubbuf(uint32_t r, uint32_t next) {
  tail_[r] = next;
  RelayRingHeader &ring = channel_.ring(r);
  // seq_cst store then load, against the producer's flag store then tail load:
  // either it sees the new tail or we see it waiting.
  ring.tail.store(next, std::memory_order_seq_cst);
  if (ring.producerWaiting.load(std::memory_order_seq_cst))
    futexWakeAll(ring.tail);
  RelayHeader &h = channel_.header();
  if (h.consumerStalled.load(std::memory_order_relaxed))
    h.consumerStalled.store(0, std::memory_order_relaxed);
}

// A ring is read up to what its producer handed over: the consumer's own tail
// against the shared head (a damaged ring never again).
bool RelayConsumer::anyFull() const {
  for (uint32_t r = 0; r < channel_.ringCount(); ++r) {
    if (damaged_[r])
      continue;
    if (channel_.ring(r).head.load(std::memory_order_seq_cst) != tail_[r])
      return true;
  }
  return false;
}

} // namespace sonde::transport
