#include "runtime/transport/RelayChannel.h"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <new>
#include <sys/syscall.h>
#include <unistd.h>

namespace sonde::transport {

namespace {

struct Layout {
  uint64_t ringsOffset, slotsOffset, dataOffset, totalSize;
};

bool isPowerOfTwo(uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }
uint64_t alignUp(uint64_t v, uint64_t a) { return (v + a - 1) & ~(a - 1); }

// Slot headers per ring, rounded up to whole cache lines: producers of different
// rings store to their slots on every commit and must not share a line.
uint64_t slotStride(uint32_t subbufCount) {
  return alignUp(uint64_t{subbufCount} * sizeof(RelaySlotHeader), 64) / sizeof(RelaySlotHeader);
}

Layout layoutFor(uint32_t subbufSize, uint32_t subbufCount, uint32_t ringCount) {
  Layout l;
  l.ringsOffset = alignUp(sizeof(RelayHeader), 64);
  l.slotsOffset = l.ringsOffset + uint64_t{ringCount} * sizeof(RelayRingHeader);
  uint64_t slotHeaders = uint64_t{ringCount} * slotStride(subbufCount);
  l.dataOffset = alignUp(l.slotsOffset + slotHeaders * sizeof(RelaySlotHeader), kRelayDataAlign);
  l.totalSize = l.dataOffset + uint64_t{ringCount} * subbufCount * subbufSize;
  return l;
}

const char *checkConfig(const RelayConfig &c) {
  if (!isPowerOfTwo(c.subbufSize) || c.subbufSize < 64 || c.subbufSize > (1u << 30))
    return "relay sub-buffer size must be a power of two from 64 bytes to 1 GiB";
  if (!isPowerOfTwo(c.subbufCount) || c.subbufCount < 2 || c.subbufCount > (1u << 20))
    return "relay sub-buffer count must be a power of two from 2 to 2^20";
  if (c.ringCount == 0 || c.ringCount > 65536)
    return "relay ring count must be from 1 to 65536";
  if (c.mode != RelayMode::Block && c.mode != RelayMode::Discard && c.mode != RelayMode::Overwrite)
    return "unknown relay mode";
  return nullptr;
}

template <typename T> std::optional<T> fail(std::string *error, std::string msg) {
  if (error)
    *error = std::move(msg);
  return std::nullopt;
}

uint64_t ownerWordOfCaller() {
  return (uint64_t(uint32_t(getpid())) << 32) | uint32_t(syscall(SYS_gettid));
}

// Whether the thread named by an owner word is gone (its process died, or the
// thread exited). A tid reused since then looks alive: the ring stays taken.
bool ownerIsDead(uint64_t owner) {
  auto pid = pid_t(owner >> 32), tid = pid_t(owner & 0xffffffffu);
  return syscall(SYS_tgkill, pid, tid, 0) == -1 && errno == ESRCH;
}

} // namespace

std::optional<RelayChannel> RelayChannel::create(const RelayConfig &config, std::string *error) {
  if (const char *problem = checkConfig(config))
    return fail<RelayChannel>(error, problem);
  Layout l = layoutFor(config.subbufSize, config.subbufCount, config.ringCount);
  auto mapping =
      values::SharedMapping::create("sonde-relay", l.totalSize, "the relay channel", error);
  if (!mapping)
    return std::nullopt;
  void *base = mapping->base();
  auto *h = new (base) RelayHeader{};
  std::memcpy(h->magic, kRelayMagic, sizeof(h->magic));
  h->version = kRelayVersion;
  h->mode = config.mode;
  h->subbufSize = config.subbufSize;
  h->subbufCount = config.subbufCount;
  h->ringCount = config.ringCount;
  h->totalSize = l.totalSize;
  h->blockTimeoutNs = config.blockTimeoutNs;
  h->ringsOffset = l.ringsOffset;
  h->slotsOffset = l.slotsOffset;
  h->dataOffset = l.dataOffset;
  RelayChannel channel(std::move(*mapping), config);
  for (uint32_t r = 0; r < config.ringCount; ++r) {
    new (&channel.ring(r)) RelayRingHeader{};
    for (uint32_t s = 0; s < config.subbufCount; ++s)
      new (&channel.slot(r, s)) RelaySlotHeader{kRelayNoSubbuf, 0, 0, 0, 0, 0};
  }
  return channel;
}

std::optional<RelayChannel> RelayChannel::attach(int fd, std::string *error) {
  auto mapping = values::SharedMapping::map(fd, sizeof(RelayHeader), "the relay channel", error);
  if (!mapping)
    return std::nullopt;
  uint64_t size = mapping->size();
  const void *base = mapping->base();
  const auto *h = static_cast<const RelayHeader *>(base);
  const char *problem = nullptr;
  RelayConfig shape{h->mode, h->subbufSize, h->subbufCount, h->ringCount, h->blockTimeoutNs};
  if (std::memcmp(h->magic, kRelayMagic, sizeof(h->magic)) != 0)
    problem = "not a sonde relay channel";
  else if (h->version != kRelayVersion)
    problem = "relay channel version mismatch";
  else if (checkConfig(shape) != nullptr || h->totalSize != size)
    problem = "relay channel header is inconsistent";
  else if (Layout l = layoutFor(h->subbufSize, h->subbufCount, h->ringCount);
           l.totalSize != size || h->ringsOffset != l.ringsOffset ||
           h->slotsOffset != l.slotsOffset || h->dataOffset != l.dataOffset)
    problem = "relay channel header is inconsistent";
  if (problem)
    return fail<RelayChannel>(error, problem);
  return RelayChannel(std::move(*mapping), shape);
}

RelayChannel::RelayChannel(values::SharedMapping mapping, const RelayConfig &config)
    : mapping_(std::move(mapping)), config_(config) {
  Layout l = layoutFor(config.subbufSize, config.subbufCount, config.ringCount);
  ringsOffset_ = l.ringsOffset;
  slotsOffset_ = l.slotsOffset;
  dataOffset_ = l.dataOffset;
  slotStride_ = slotStride(config.subbufCount);
}

const char *RelayChannel::overwrittenHeaderField() const {
  const RelayHeader &h = header();
  if (std::memcmp(h.magic, kRelayMagic, sizeof(h.magic)) != 0)
    return "magic";
  if (h.version != kRelayVersion)
    return "version";
  if (h.mode != config_.mode)
    return "mode";
  if (h.subbufSize != config_.subbufSize)
    return "subbufSize";
  if (h.subbufCount != config_.subbufCount)
    return "subbufCount";
  if (h.ringCount != config_.ringCount)
    return "ringCount";
  if (h.totalSize != mapping_.size())
    return "totalSize";
  if (h.blockTimeoutNs != config_.blockTimeoutNs)
    return "blockTimeoutNs";
  if (h.ringsOffset != ringsOffset_ || h.slotsOffset != slotsOffset_ || h.dataOffset != dataOffset_)
    return "offsets";
  return nullptr;
}

RelayRingHeader &RelayChannel::ring(uint32_t r) const {
  auto *rings =
      reinterpret_cast<RelayRingHeader *>(static_cast<char *>(mapping_.base()) + ringsOffset_);
  return rings[r];
}

RelaySlotHeader &RelayChannel::slot(uint32_t r, uint32_t subbuf) const {
  auto *slots =
      reinterpret_cast<RelaySlotHeader *>(static_cast<char *>(mapping_.base()) + slotsOffset_);
  return slots[r * slotStride_ + (subbuf & (config_.subbufCount - 1))];
}

char *RelayChannel::slotData(uint32_t r, uint32_t subbuf) const {
  uint64_t index = uint64_t{r} * config_.subbufCount + (subbuf & (config_.subbufCount - 1));
  return static_cast<char *>(mapping_.base()) + dataOffset_ + index * config_.subbufSize;
}

int RelayChannel::claimRing() const {
  uint64_t me = ownerWordOfCaller();
  uint32_t n = ringCount();
  for (uint32_t r = 0; r < n; ++r) {
    uint64_t expected = 0;
    if (ring(r).owner.load(std::memory_order_relaxed) == 0 &&
        ring(r).owner.compare_exchange_strong(expected, me, std::memory_order_acquire))
      return int(r);
  }
  for (uint32_t r = 0; r < n; ++r) {
    uint64_t owner = ring(r).owner.load(std::memory_order_relaxed);
    if (owner != 0 && owner != me && ownerIsDead(owner) &&
        ring(r).owner.compare_exchange_strong(owner, me, std::memory_order_acquire))
      return int(r);
  }
  return -1;
}

void RelayChannel::releaseRing(uint32_t r) const {
  ring(r).owner.store(0, std::memory_order_release);
}

RelayCounters RelayChannel::ringCounters(uint32_t r) const {
  const RelayRingHeader &h = ring(r);
  RelayCounters c{h.recordsWritten.load(std::memory_order_relaxed),
                  h.recordsLost.load(std::memory_order_relaxed),
                  h.recordsOverwritten.load(std::memory_order_relaxed),
                  h.bytesWritten.load(std::memory_order_relaxed)};
  // The ring's counters cover handed-over sub-buffers; the open one counts in its slot.
  uint32_t head = h.head.load(std::memory_order_acquire);
  const RelaySlotHeader &open = slot(r, head);
  if (open.subbuf.load(std::memory_order_acquire) == head) {
    c.recordsWritten += open.records.load(std::memory_order_relaxed);
    c.bytesWritten += std::min(open.used.load(std::memory_order_relaxed), config_.subbufSize);
  }
  return c;
}

RelayCounters RelayChannel::totals() const {
  RelayCounters t;
  for (uint32_t r = 0; r < ringCount(); ++r) {
    RelayCounters c = ringCounters(r);
    t.recordsWritten += c.recordsWritten;
    t.recordsLost += c.recordsLost;
    t.recordsOverwritten += c.recordsOverwritten;
    t.bytesWritten += c.bytesWritten;
  }
  t.recordsLost += header().unclaimedLost.load(std::memory_order_relaxed);
  return t;
}

} // namespace sonde::transport
