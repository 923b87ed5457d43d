// The bytes of a script-state segment: what every mapping (sonde's, each target's)
// agrees on. Only offsets are stored, never pointers, so any mapping address works.
// A fresh memfd is all zeros, and zero is the empty state of every dynamic field.
#pragma once

#include "runtime/values/ValueAbi.h"

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace sonde::values {

inline constexpr char kSegmentMagic[8] = {'S', 'O', 'N', 'D', 'E', 'S', 'E', 'G'};
inline constexpr uint32_t kSegmentVersion = 3;
inline constexpr uint64_t kSegmentHeaderSize = 16384;
inline constexpr uint32_t kMaxKeys = 9;
inline constexpr uint32_t kMaxAgents = 256;    // traced processes (a target and its fork children)
inline constexpr uint32_t kMaxBuckets = 128;   // stap's STP_MAX_BUCKETS and HIST_LOG_BUCKETS
inline constexpr uint32_t kLogBucketZero = 64; // stap's HIST_LOG_BUCKET0

static_assert(std::atomic<uint32_t>::is_always_lock_free &&
                  std::atomic<uint64_t>::is_always_lock_free,
              "shared-memory atomics must be address-free");

// What sonde knew when the session started, for handlers in every process (stap's
// staprun hands the same to its module): the invoking user and the time zone.
struct SessionFacts {
  uint32_t consumerUid;  // is_myproc()
  int32_t tzSecondsWest; // tz_gmtoff()
  char tzName[32];       // tz_name()
};

// Requests handlers send the sonde process (SessionMailbox.h): a bounded queue
// any process may post to, sonde alone takes from.
inline constexpr uint32_t kMailboxSlots = 16;
inline constexpr uint32_t kMailboxText = 512; // a default MAXSTRINGLEN string

struct MailboxSlot {
  // Round r of this slot (its positions p with p / kMailboxSlots == r): 2r while
  // free for p, 2r + 1 once p is written. All zeros is an empty mailbox.
  std::atomic<uint64_t> stamp;
  uint32_t kind;
  uint32_t length;
  char text[kMailboxText];
};

struct Mailbox {
  std::atomic<uint64_t> head; // the next position to write
  std::atomic<uint64_t> tail; // the next position to take (sonde)
  // Futex words (mod 2^32): posts so far (and wake-ups of sonde), requests served.
  std::atomic<uint32_t> posted;
  std::atomic<uint32_t> served;
  MailboxSlot slots[kMailboxSlots];
};

// Output that never reached its destination, counted by the process that lost
// it (sonde reports it when the run ends): the text transport's write errors,
// and every record a netlink producer dropped, also those no message reported
// (a consumer that stalls until the producer's process has exited).
struct OutputAccounting {
  std::atomic<int32_t> writeErrno; // the first failed output write's errno; 0: none
  uint32_t reserved;
  std::atomic<uint64_t> bytesLost; // text output not written after a write error
  std::atomic<uint64_t> linesLost; // the newlines in those bytes
  std::atomic<uint64_t> netlinkRecordsLost;
};

struct SegmentHeader {
  char magic[8];
  uint32_t version;
  uint32_t cpuSlots; // per-CPU slots of each scalar stats global
  uint64_t totalSize;
  uint64_t layoutFingerprint; // of the serialized GlobalLayout this segment was built for
  uint32_t globalCount;
  uint32_t reserved;
  sonde_limits limits;
  // Session state, shared by sonde and every target.
  std::atomic<uint32_t> sessionState;
  std::atomic<uint32_t> exitRequested;
  std::atomic<uint64_t> errorCount;
  std::atomic<uint64_t> skippedCount;
  // The pid of each agent (one per traced process) attached to this segment, 0
  // in a free slot. sonde waits for them to detach before end probes run; a
  // slot whose process died (a crashed target) no longer counts.
  std::atomic<uint32_t> agentPids[kMaxAgents];
  SessionFacts facts;
  Mailbox mailbox;
  OutputAccounting output;
};
static_assert(sizeof(SegmentHeader) <= kSegmentHeaderSize);

// The header of the segment an ABI handle names (the handle is its first byte).
inline SegmentHeader &segmentHeader(sonde_segment *seg) {
  return *reinterpret_cast<SegmentHeader *>(seg);
}
inline const SegmentHeader &segmentHeader(const sonde_segment *seg) {
  return *reinterpret_cast<const SegmentHeader *>(seg);
}

enum class GlobalKind : uint32_t { ScalarLong = 1, ScalarString = 2, ScalarStats = 3, Map = 4 };

// Heads every global; its lock word guards the global (GlobalLocks.h): 0 when
// free, else the holder's pid, with kLockWaiters set while someone sleeps on it.
// Not a pthread mutex: a robust mutex links itself into its holder's robust
// list through pointers stored in the mutex, which the other processes mapping
// the segment could redirect into sonde's memory.
struct alignas(64) GlobalHeader {
  std::atomic<uint32_t> lock;
  uint32_t reserved;
  GlobalKind kind;
  uint32_t stringBytes; // ScalarString: size of its buffer (MAXSTRINGLEN)
};
inline constexpr uint32_t kLockWaiters = 1u << 31;
static_assert(sizeof(GlobalHeader) == 64, "data starts 64 bytes after a global's offset");
inline constexpr uint64_t kGlobalHeaderSize = sizeof(GlobalHeader);

// Static shape of a stats value (histogram and @variance), written once.
struct StatShape {
  uint32_t histKind; // enum sonde_stat_hist_kind
  uint32_t buckets;
  int64_t low, high, width;
  uint32_t varianceShift;
  uint32_t usesVariance; // Welford state is kept only when @variance is read somewhere
};

// One accumulator: a per-CPU slot of a scalar stats, or the value of a stats array entry.
// Field meanings follow stap's struct stat_data (avgS / varianceS are scaled by the shift).
struct StatBlock {
  std::atomic<uint32_t> slotLock; // per-CPU slots: 0 free, else the holder's pid
  uint32_t reserved;
  int64_t count, sum, min, max;
  int64_t avgS, m2, varianceS;
  // Followed by shape.buckets histogram counters.
};
static_assert(sizeof(StatBlock) == 64);
inline int64_t *blockBuckets(StatBlock *b) { return reinterpret_cast<int64_t *>(b + 1); }
inline const int64_t *blockBuckets(const StatBlock *b) {
  return reinterpret_cast<const int64_t *>(b + 1);
}
inline uint64_t statBlockSize(uint32_t buckets) { return sizeof(StatBlock) + 8ull * buckets; }

// Data of a scalar stats global: this header, then slotCount per-CPU blocks and one
// overflow block (updated with atomic operations only), each slotStride bytes.
struct alignas(64) StatsHeader {
  StatShape shape;
  uint32_t slotCount;
  uint32_t slotStride;
};
static_assert(sizeof(StatsHeader) == 64);

// Data of an array global: this header, the index (indexMask+1 slots of 8 bytes: entry
// number + 1 in the low half, key hash in the high half, 0 = empty), then maxEntries
// entries of entryStride bytes. Entries never move; deletion shifts index slots back
// (no tombstones), and an oldest-first list threads the live entries.
struct alignas(64) MapHeader {
  // Static, written by GlobalLayout::initialize.
  uint32_t keyCount;
  uint8_t keyKinds[kMaxKeys]; // 0 long, 1 string
  uint8_t valueKind;          // 0 long, 1 string, 2 stats
  uint8_t wrap;
  uint8_t explicitSize; // declared `a[N]`: overflow names the size limit
  uint8_t longKeysOnly; // every column is a long: keys compare as 8-byte words
  uint32_t maxEntries;
  uint32_t indexMask;
  uint32_t entryStride;
  uint32_t maxStringLen;
  uint32_t keyOffsets[kMaxKeys]; // within an entry
  uint32_t valueOffset;
  uint64_t indexOffset;   // from this header
  uint64_t entriesOffset; // from this header
  StatShape valueShape;
  // Dynamic.
  uint32_t count;
  uint32_t head, tail; // entry number + 1 (0 = none); head is the oldest
  uint32_t freeHead;   // entry number + 1 of the first recycled entry
  uint32_t fresh;      // entries [0, fresh) have been handed out at least once
  uint32_t reserved;
  uint64_t nextSeq; // insertion sequence, to rebuild the order after a crash
};

struct EntryHeader {
  uint32_t prev, next; // entry number + 1
  uint32_t hash;
  uint32_t slot; // index slot currently pointing here
  uint64_t seq;
  uint32_t live; // set last on insert, cleared first on delete
  uint32_t reserved;
};
static_assert(sizeof(EntryHeader) == 32);

inline constexpr uint8_t kKeyLong = 0;
inline constexpr uint8_t kKeyString = 1;
inline constexpr uint8_t kValueLong = 0;
inline constexpr uint8_t kValueString = 1;
inline constexpr uint8_t kValueStats = 2;

inline uint64_t alignUp(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

inline GlobalHeader *globalAt(void *base, uint64_t offset) {
  return reinterpret_cast<GlobalHeader *>(static_cast<char *>(base) + offset);
}
template <class T> T *globalData(GlobalHeader *g) {
  return reinterpret_cast<T *>(reinterpret_cast<char *>(g) + kGlobalHeaderSize);
}
template <class T> const T *globalData(const GlobalHeader *g) {
  return reinterpret_cast<const T *>(reinterpret_cast<const char *>(g) + kGlobalHeaderSize);
}

} // namespace sonde::values
