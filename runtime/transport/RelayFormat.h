// The bytes of a relay channel: what sonde's mapping and every target's mapping
// agree on. Offsets only, never pointers; process-shared atomics only, so any
// mapping address works. A fresh memfd is all zeros; create() fills the header.
//
// Sub-buffers of a ring are numbered 0, 1, 2, ... (uint32_t, wrapping); number n
// lives in slot n & (subbufCount - 1). The producer fills number `head`; numbers
// [tail, head) are full and wait for the consumer.
#pragma once

#include <atomic>
#include <cstdint>

namespace sonde::transport {

inline constexpr char kRelayMagic[8] = {'S', 'O', 'N', 'D', 'E', 'R', 'L', 'Y'};
inline constexpr uint32_t kRelayVersion = 2;
inline constexpr uint64_t kRelayDataAlign = 4096;
// A slot that never held a sub-buffer; no ring reaches that many sub-buffers.
inline constexpr uint32_t kRelayNoSubbuf = ~0u;

static_assert(std::atomic<uint32_t>::is_always_lock_free &&
                  std::atomic<uint64_t>::is_always_lock_free,
              "shared-memory atomics must be address-free");

enum class RelayMode : uint32_t {
  Block = 0,     // the producer waits (bounded) for a free sub-buffer
  Discard = 1,   // records that do not fit are dropped and counted
  Overwrite = 2, // flight recorder: the oldest sub-buffer is overwritten
};

struct alignas(64) RelayHeader {
  char magic[8];
  uint32_t version;
  RelayMode mode;
  uint32_t subbufSize;  // power of two
  uint32_t subbufCount; // per ring, power of two
  uint32_t ringCount;
  uint32_t reserved;
  uint64_t totalSize;
  uint64_t blockTimeoutNs; // block mode: longest wait before a record is lost
  uint64_t ringsOffset;    // RelayRingHeader[ringCount]
  uint64_t slotsOffset;    // per ring, RelaySlotHeader[subbufCount] padded to 64 bytes
  uint64_t dataOffset;     // ringCount * subbufCount * subbufSize bytes
  // Consumer wakeups: producers bump wakeSeq (a futex word) when a sub-buffer
  // fills and call futex_wake only while consumerWaiting is set.
  alignas(64) std::atomic<uint32_t> wakeSeq;
  std::atomic<uint32_t> consumerWaiting;
  // Set by a block-mode producer whose wait timed out (the consumer looks dead):
  // producers then drop at once instead of each waiting. The consumer clears it
  // when it releases a sub-buffer.
  std::atomic<uint32_t> consumerStalled;
  // Records dropped because their thread found no free ring.
  std::atomic<uint64_t> unclaimedLost;
};

struct alignas(64) RelayRingHeader {
  // (pid << 32) | tid of the producing thread; 0 when free.
  std::atomic<uint64_t> owner;
  // Written by the producer only.
  std::atomic<uint32_t> head;
  std::atomic<uint32_t> producerWaiting; // block mode: the producer sleeps on `tail`
  std::atomic<uint64_t> recordsWritten;
  std::atomic<uint64_t> recordsLost;
  std::atomic<uint64_t> recordsOverwritten; // overwrite mode
  std::atomic<uint64_t> bytesWritten;
  // Written by the consumer only (own cache line): sub-buffers released. A futex word.
  alignas(64) std::atomic<uint32_t> tail;
};
static_assert(sizeof(RelayRingHeader) == 128);

struct RelaySlotHeader {
  std::atomic<uint32_t> subbuf;  // the sub-buffer number this slot holds
  std::atomic<uint32_t> used;    // committed bytes; the rest of the slot is padding
  std::atomic<uint32_t> records; // committed records (overwrite accounting)
  uint32_t reserved;
  // The ring's owner word when the producer opened the sub-buffer: who wrote it.
  std::atomic<uint64_t> owner;
  uint64_t reserved2;
};
static_assert(sizeof(RelaySlotHeader) == 32);

} // namespace sonde::transport
