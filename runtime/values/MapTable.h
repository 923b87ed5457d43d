// An array global: open addressing with linear probing over an index of 8-byte
// slots (key hash, entry number), entries in a fixed pool. A lookup is one hash,
// a probe of adjacent slots and a key compare on hash match; no allocation, no
// syscall. Deletion shifts later slots of the cluster back, so no tombstones ever
// accumulate. Entries never move, and an oldest-first list threads the live ones:
// it gives stap's unsorted foreach order (insertion order) and the entry `%`
// arrays evict. The caller holds the global's lock for every operation.
//
// Any process mapping the segment can write the table, so nothing read from it
// is used unchecked: the static shape (sizes, offsets, index mask) comes from
// the trusted copy (SegmentShadow.h; the header itself in a target), and every
// entry number, index slot, link and count is range-checked where it is read.
// A failed check is noted as corruption of the global and the operation gives
// up (not found, full, end of list): never an access outside the table, never a
// loop that does not end.
#pragma once

#include "runtime/values/MapKeys.h"
#include "runtime/values/SegmentFormat.h"
#include "runtime/values/SegmentShadow.h"

#include <cstring>

namespace sonde::values {

class MapTable {
public:
  explicit MapTable(MapHeader *h) : h_(h), s_(trustedMap(h)) {}
  explicit MapTable(const MapHeader *h) : MapTable(const_cast<MapHeader *>(h)) {}

  // A key tuple prepared for probing: its hash and the truncated string lengths.
  struct Probe {
    const sonde_key *keys;
    uint32_t hash;
    uint32_t lengths[kMaxKeys];
  };
  Probe prepare(const sonde_key *keys) const;
  // For matches() only: columns set in `wild` are `*` and never read (no hash).
  Probe prepareMatch(const sonde_key *keys, uint32_t wild) const;

  // Entry number + 1 of the key, 0 if absent.
  uint32_t find(const Probe &p) const;
  // The same from raw keys, with a short path for the common one-column array.
  uint32_t find(const sonde_key *keys) const;
  // Entry number + 1 of the key, inserting it (zero value) if absent; 0 when full
  // (a `%` array evicts its oldest entry instead).
  uint32_t findOrInsert(const sonde_key *keys) {
    uint32_t ref = find(keys);
    return ref ? ref : insert(prepare(keys));
  }
  // Removes a live entry (entry number + 1).
  void remove(uint32_t ref);
  void clear();

  // Whether entry `ref` matches `keys` on every column not set in `wild`.
  bool matches(uint32_t ref, const Probe &p, uint32_t wild) const;

  // Rebuilds index, order list, free list and count from the entries' own records,
  // after a process died holding the lock halfway through an update.
  void repair();

  // Checks every invariant of the table (count, order list, index, free list,
  // strings terminated, stats values); false after noting the first violation.
  bool check() const;

  // The static fields (in sonde its own copy); the dynamic ones only through
  // the calls below, which check them.
  const MapHeader &header() const { return *s_; }
  uint32_t count() const;
  // The oldest entry, and the entry after `ref` in insertion order; 0 at the end.
  uint32_t oldest() const;
  uint32_t nextNewer(uint32_t ref) const;

  // Entry `ref` (a number + 1 this table returned): its parts.
  EntryHeader *entry(uint32_t ref) const {
    return reinterpret_cast<EntryHeader *>(reinterpret_cast<char *>(h_) + s_->entriesOffset +
                                           uint64_t{ref - 1} * s_->entryStride);
  }
  char *key(uint32_t ref, uint32_t column) const {
    return reinterpret_cast<char *>(entry(ref)) + s_->keyOffsets[column];
  }
  int64_t keyLong(uint32_t ref, uint32_t column) const {
    return *reinterpret_cast<const int64_t *>(key(ref, column));
  }
  char *value(uint32_t ref) const { return reinterpret_cast<char *>(entry(ref)) + s_->valueOffset; }
  StatBlock *statValue(uint32_t ref) const { return reinterpret_cast<StatBlock *>(value(ref)); }

private:
  uint64_t *index() const {
    return reinterpret_cast<uint64_t *>(reinterpret_cast<char *>(h_) + s_->indexOffset);
  }
  // An entry number + 1 the pool has.
  bool inPool(uint32_t ref) const { return ref - 1 < s_->maxEntries; }
  // Notes corruption of this global; returns 0 (the "none" answer of most calls).
  [[gnu::cold]] uint32_t corrupt(const char *what, uint64_t value) const;
  // The same, answering false (for checks).
  [[gnu::cold]] bool fails(const char *what, uint64_t value) const;
  bool keysEqual(uint32_t ref, const Probe &p) const;
  // find() for other key tuples, kept out of line so the long-key path inlines.
  uint32_t findWide(const sonde_key *keys) const;
  uint32_t findOneString(const char *s) const;
  // The end of a probe sequence that met no empty slot: the index is never full.
  [[gnu::cold]] uint32_t indexFull() const;
  // Adds a key known to be absent.
  uint32_t insert(const Probe &p);
  uint32_t allocateEntry();
  bool placeInIndex(uint32_t ref, uint32_t hash);
  void linkNewest(uint32_t ref, uint32_t tail);
  bool unlink(uint32_t ref);
  void resetValue(uint32_t ref);
  bool checkEntry(uint32_t ref) const;

  MapHeader *h_;       // the table in the segment
  const MapHeader *s_; // its static fields, from a trusted copy
};

// Copies a NUL-terminated string into a MAXSTRINGLEN buffer, truncating like stap.
void copyBoundedString(char *dst, const char *src, uint32_t maxStringLen);

// The lookup path is inline: generated code calls one ABI function per access.

inline MapTable::Probe MapTable::prepare(const sonde_key *keys) const {
  Probe p;
  p.keys = keys;
  uint64_t h = kHashMultiplier ^ s_->keyCount;
  if (s_->longKeysOnly) {
    for (uint32_t c = 0; c < s_->keyCount; ++c)
      h = hashColumn(h, static_cast<uint64_t>(keys[c].l));
  } else {
    for (uint32_t c = 0; c < s_->keyCount; ++c) {
      if (s_->keyKinds[c] == kKeyLong) {
        h = hashColumn(h, static_cast<uint64_t>(keys[c].l));
        continue;
      }
      p.lengths[c] = static_cast<uint32_t>(strnlen(keys[c].s, s_->maxStringLen - 1));
      h = hashColumn(h, hashBytes(keys[c].s, p.lengths[c]));
    }
  }
  p.hash = static_cast<uint32_t>(h);
  return p;
}

inline bool MapTable::matches(uint32_t ref, const Probe &p, uint32_t wild) const {
  for (uint32_t c = 0; c < s_->keyCount; ++c) {
    if (wild & (1u << c))
      continue;
    const char *stored = key(ref, c);
    if (s_->keyKinds[c] == kKeyLong) {
      if (load64(stored) != static_cast<uint64_t>(p.keys[c].l))
        return false;
    } else if (std::memcmp(stored, p.keys[c].s, p.lengths[c]) != 0 ||
               stored[p.lengths[c]] != '\0') {
      return false;
    }
  }
  return true;
}

inline bool MapTable::keysEqual(uint32_t ref, const Probe &p) const {
  if (s_->longKeysOnly) {
    // Long columns are laid out back to back, like the sonde_key array.
    const char *stored = key(ref, 0);
    for (uint32_t c = 0; c < s_->keyCount; ++c)
      if (load64(stored + 8 * c) != static_cast<uint64_t>(p.keys[c].l))
        return false;
    return true;
  }
  return matches(ref, p, 0);
}

inline uint32_t MapTable::find(const sonde_key *keys) const {
  if (s_->keyCount != 1)
    return findWide(keys);
  if (!s_->longKeysOnly)
    return findOneString(keys[0].s);
  // One long column: hash and compare it directly, without a Probe.
  auto wanted = static_cast<uint64_t>(keys[0].l);
  auto hash = static_cast<uint32_t>(hashColumn(kHashMultiplier ^ 1, wanted));
  const uint64_t *slots = index();
  uint32_t mask = s_->indexMask;
  for (uint32_t i = hash & mask, n = 0; n <= mask; i = (i + 1) & mask, ++n) {
    uint64_t s = slots[i];
    if (s == 0)
      return 0;
    auto ref = static_cast<uint32_t>(s);
    if (static_cast<uint32_t>(s >> 32) != hash)
      continue;
    if (!inPool(ref))
      return corrupt("an index slot names entry %u, past its size", ref);
    if (load64(key(ref, 0)) == wanted)
      return ref;
  }
  return indexFull();
}

inline uint32_t MapTable::find(const Probe &p) const {
  const uint64_t *slots = index();
  uint32_t mask = s_->indexMask;
  // The index is at most half full, so an empty slot ends every probe.
  for (uint32_t i = p.hash & mask, n = 0; n <= mask; i = (i + 1) & mask, ++n) {
    uint64_t s = slots[i];
    if (s == 0)
      return 0;
    auto ref = static_cast<uint32_t>(s);
    if (static_cast<uint32_t>(s >> 32) != p.hash)
      continue;
    if (!inPool(ref))
      return corrupt("an index slot names entry %u, past its size", ref);
    if (keysEqual(ref, p))
      return ref;
  }
  return indexFull();
}

} // namespace sonde::values
