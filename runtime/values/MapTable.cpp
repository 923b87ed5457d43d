#include "runtime/values/MapTable.h"

#include "runtime/values/ScratchArena.h"
#include "runtime/values/StatAccumulator.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <string>

namespace sonde::values {

namespace {

void setLive(EntryHeader *e, uint32_t v) {
  std::atomic_ref<uint32_t>(e->live).store(v, std::memory_order_release);
}

uint64_t slotWord(uint32_t hash, uint32_t ref) { return uint64_t{hash} << 32 | ref; }

} // namespace

void copyBoundedString(char *dst, const char *src, uint32_t maxStringLen) {
  size_t n = strnlen(src, maxStringLen - 1);
  std::memmove(dst, src, n);
  dst[n] = '\0';
}

uint32_t MapTable::corrupt(const char *what, uint64_t value) const {
  noteSegmentCorruption(h_, what, value);
  return 0;
}

bool MapTable::fails(const char *what, uint64_t value) const {
  corrupt(what, value);
  return false;
}

uint32_t MapTable::indexFull() const {
  return fails("its index has no empty slot among its %u", uint64_t{s_->indexMask} + 1);
}

uint32_t MapTable::count() const {
  uint32_t n = h_->count;
  return n <= s_->maxEntries ? n : corrupt("its entry count %u is past its size", n);
}

uint32_t MapTable::oldest() const {
  uint32_t ref = h_->head;
  return ref == 0 || inPool(ref) ? ref : corrupt("its oldest-entry link %u is out of range", ref);
}

// Links run from older to newer entries, whose insertion numbers grow: a link
// back to an older one (a loop) is corruption, so every walk ends.
uint32_t MapTable::nextNewer(uint32_t ref) const {
  const EntryHeader *e = entry(ref);
  uint32_t next = e->next;
  if (next == 0)
    return 0;
  if (!inPool(next))
    return corrupt("an entry's newer-entry link %u is out of range", next);
  if (entry(next)->seq <= e->seq)
    return corrupt("its insertion-order list links back to the older entry %u", next);
  return next;
}

MapTable::Probe MapTable::prepareMatch(const sonde_key *keys, uint32_t wild) const {
  Probe p;
  p.keys = keys;
  p.hash = 0;
  for (uint32_t c = 0; c < s_->keyCount; ++c)
    p.lengths[c] = (wild & (1u << c)) || s_->keyKinds[c] == kKeyLong
                       ? 0
                       : static_cast<uint32_t>(strnlen(keys[c].s, s_->maxStringLen - 1));
  return p;
}

uint32_t MapTable::findWide(const sonde_key *keys) const { return find(prepare(keys)); }

uint32_t MapTable::findOneString(const char *s) const {
  auto length = static_cast<uint32_t>(strnlen(s, s_->maxStringLen - 1));
  auto hash = static_cast<uint32_t>(hashColumn(kHashMultiplier ^ 1, hashBytes(s, length)));
  const uint64_t *slots = index();
  uint32_t mask = s_->indexMask;
  for (uint32_t i = hash & mask, n = 0; n <= mask; i = (i + 1) & mask, ++n) {
    uint64_t slot = slots[i];
    if (slot == 0)
      return 0;
    auto ref = static_cast<uint32_t>(slot);
    if (static_cast<uint32_t>(slot >> 32) != hash)
      continue;
    if (!inPool(ref))
      return corrupt("an index slot names entry %u, past its size", ref);
    const char *stored = key(ref, 0);
    if (std::memcmp(stored, s, length) == 0 && stored[length] == '\0')
      return ref;
  }
  return indexFull();
}

uint32_t MapTable::allocateEntry() {
  uint32_t ref = h_->freeHead;
  if (ref != 0) {
    if (!inPool(ref))
      return corrupt("its free-entry link %u is out of range", ref);
    h_->freeHead = entry(ref)->next; // checked when it is used
    return ref;
  }
  uint32_t fresh = h_->fresh;
  if (fresh >= s_->maxEntries)
    return corrupt("its free-entry list is empty with all %u entries handed out", fresh);
  h_->fresh = fresh + 1;
  return fresh + 1;
}

bool MapTable::placeInIndex(uint32_t ref, uint32_t hash) {
  uint64_t *slots = index();
  uint32_t mask = s_->indexMask;
  for (uint32_t i = hash & mask, n = 0; n <= mask; i = (i + 1) & mask, ++n)
    if (slots[i] == 0) {
      slots[i] = slotWord(hash, ref);
      entry(ref)->slot = i;
      return true;
    }
  return indexFull();
}

void MapTable::linkNewest(uint32_t ref, uint32_t tail) {
  EntryHeader *e = entry(ref);
  e->prev = tail;
  e->next = 0;
  if (tail)
    entry(tail)->next = ref;
  else
    h_->head = ref;
  h_->tail = ref;
}

bool MapTable::unlink(uint32_t ref) {
  EntryHeader *e = entry(ref);
  uint32_t prev = e->prev, next = e->next;
  if (prev != 0 && !inPool(prev))
    return fails("an entry's older-entry link %u is out of range", prev);
  if (next != 0 && !inPool(next))
    return fails("an entry's newer-entry link %u is out of range", next);
  if (prev)
    entry(prev)->next = next;
  else
    h_->head = next;
  if (next)
    entry(next)->prev = prev;
  else
    h_->tail = prev;
  return true;
}

void MapTable::resetValue(uint32_t ref) {
  char *v = value(ref);
  switch (s_->valueKind) {
  case kValueLong: std::memset(v, 0, 8); break;
  case kValueString:
    v[0] = '\0';
    v[s_->maxStringLen - 1] = '\0';
    break;
  default: std::memset(v, 0, statBlockSize(s_->valueShape.buckets)); break;
  }
}

uint32_t MapTable::insert(const Probe &p) {
  if (count() >= s_->maxEntries) {
    uint32_t old = oldest();
    if (!s_->wrap || old == 0)
      return 0;
    remove(old);
    if (count() >= s_->maxEntries)
      return 0;
  }
  uint32_t tail = h_->tail;
  if (tail != 0 && !inPool(tail))
    return fails("its newest-entry link %u is out of range", tail);
  uint32_t ref = allocateEntry();
  if (ref == 0)
    return 0;
  EntryHeader *e = entry(ref);
  if (e->live != 0)
    return corrupt("the free entry %u is marked live", ref);
  for (uint32_t c = 0; c < s_->keyCount; ++c) {
    if (s_->keyKinds[c] == kKeyLong)
      std::memcpy(key(ref, c), &p.keys[c].l, 8);
    else
      copyBoundedString(key(ref, c), p.keys[c].s, s_->maxStringLen);
  }
  resetValue(ref);
  e->hash = p.hash;
  e->seq = h_->nextSeq++;
  // From here on the entry is complete: repair() may trust it.
  setLive(e, 1);
  if (!placeInIndex(ref, p.hash)) {
    setLive(e, 0);
    return 0;
  }
  linkNewest(ref, tail);
  ++h_->count;
  return ref;
}

void MapTable::remove(uint32_t ref) {
  EntryHeader *e = entry(ref);
  uint64_t *slots = index();
  uint32_t mask = s_->indexMask;
  uint32_t hole = e->slot;
  if (hole > mask || static_cast<uint32_t>(slots[hole]) != ref) {
    corrupt("an entry's index slot %u does not point back at it", hole);
    return;
  }
  if (h_->count == 0) {
    corrupt("it counts no entry but holds entry %u", ref);
    return;
  }
  if (!unlink(ref))
    return;
  setLive(e, 0);
  // Backward-shift deletion: pull each later member of the cluster into the hole
  // unless its home slot lies cyclically within (hole, position].
  for (uint32_t j = (hole + 1) & mask, n = 0; slots[j] != 0 && n < mask; j = (j + 1) & mask, ++n) {
    uint64_t word = slots[j];
    uint32_t home = static_cast<uint32_t>(word >> 32) & mask;
    if (((j - home) & mask) >= ((j - hole) & mask)) {
      auto moved = static_cast<uint32_t>(word);
      if (!inPool(moved)) {
        corrupt("an index slot names entry %u, past its size", moved);
        break;
      }
      slots[hole] = word;
      entry(moved)->slot = hole;
      hole = j;
    }
  }
  slots[hole] = 0;
  e->next = h_->freeHead;
  h_->freeHead = ref;
  --h_->count;
}

void MapTable::clear() {
  uint64_t *slots = index();
  uint32_t mask = s_->indexMask;
  bool damaged = false;
  uint32_t ref = oldest();
  for (uint32_t n = 0; ref != 0 && !damaged; ++n) {
    if (n == s_->maxEntries) {
      corrupt("its insertion-order list is longer than its size of %u", n);
      damaged = true;
      break;
    }
    EntryHeader *e = entry(ref);
    setLive(e, 0);
    uint32_t slot = e->slot;
    if (slot <= mask) {
      slots[slot] = 0;
    } else {
      corrupt("an entry's index slot %u is out of range", slot);
      damaged = true;
    }
    ref = e->next;
    if (ref != 0 && !inPool(ref)) {
      corrupt("an entry's newer-entry link %u is out of range", ref);
      damaged = true;
    }
  }
  // A damaged list may have missed entries the index still names.
  if (damaged)
    std::memset(slots, 0, (uint64_t{mask} + 1) * 8);
  h_->head = h_->tail = 0;
  h_->freeHead = 0;
  h_->fresh = 0;
  h_->count = 0;
}

void MapTable::repair() {
  uint32_t fresh = std::min(h_->fresh, s_->maxEntries);
  h_->fresh = fresh;
  std::memset(index(), 0, (uint64_t{s_->indexMask} + 1) * 8);
  h_->head = h_->tail = h_->freeHead = 0;
  h_->count = 0;

  struct Live {
    uint64_t seq;
    uint32_t ref;
  };
  ScratchMark mark;
  auto *live = static_cast<Live *>(scratchAllocate(sizeof(Live) * (fresh + 1), mark));
  uint32_t n = 0;
  for (uint32_t ref = fresh; ref >= 1; --ref) {
    EntryHeader *e = entry(ref);
    if (e->live != 1 || !live) {
      // Unusable or no memory to order it: recycle (the latter loses the entry).
      e->live = 0;
      e->next = h_->freeHead;
      h_->freeHead = ref;
      continue;
    }
    for (uint32_t c = 0; c < s_->keyCount; ++c)
      if (s_->keyKinds[c] == kKeyString)
        key(ref, c)[s_->maxStringLen - 1] = '\0';
    if (s_->valueKind == kValueString)
      value(ref)[s_->maxStringLen - 1] = '\0';
    live[n++] = {e->seq, ref};
  }
  if (!live)
    return;
  std::sort(live, live + n, [](const Live &a, const Live &b) { return a.seq < b.seq; });
  for (uint32_t i = 0; i < n; ++i) {
    EntryHeader *e = entry(live[i].ref);
    if (!placeInIndex(live[i].ref, e->hash))
      break;
    linkNewest(live[i].ref, h_->tail);
    if (e->seq >= h_->nextSeq)
      h_->nextSeq = e->seq + 1;
    ++h_->count;
  }
  scratchRelease(mark);
}

// One live entry of the order list: in the index, strings terminated, a sound value.
bool MapTable::checkEntry(uint32_t ref) const {
  const EntryHeader *e = entry(ref);
  if (e->live != 1)
    return corrupt("entry %u of its insertion-order list is not live", ref);
  uint32_t slot = e->slot;
  if (slot > s_->indexMask || index()[slot] != slotWord(e->hash, ref))
    return fails("an entry's index slot %u does not point back at it", slot);
  for (uint32_t c = 0; c < s_->keyCount; ++c)
    if (s_->keyKinds[c] == kKeyString && !std::memchr(key(ref, c), '\0', s_->maxStringLen))
      return fails("the string key of entry %u is not terminated", ref);
  if (s_->valueKind == kValueString && !std::memchr(value(ref), '\0', s_->maxStringLen))
    return fails("the string value of entry %u is not terminated", ref);
  if (s_->valueKind == kValueStats) {
    if (const char *problem = statBlockProblem(*statValue(ref), s_->valueShape)) {
      noteSegmentCorruption(h_, std::string(problem) + " in entry " + std::to_string(ref));
      return false;
    }
  }
  return true;
}

bool MapTable::check() const {
  uint32_t live = h_->count, fresh = h_->fresh, maxEntries = s_->maxEntries;
  if (live > maxEntries)
    return fails("its entry count %u is past its size", live);
  if (fresh > maxEntries || fresh < live)
    return fails("its count of entries handed out, %u, is out of range", fresh);
  // The order list: exactly `count` live entries, each linked both ways, in
  // growing insertion numbers.
  uint32_t n = 0, previous = 0;
  uint64_t lastSeq = 0;
  for (uint32_t ref = h_->head; ref != 0; ++n) {
    if (!inPool(ref) || ref > fresh)
      return fails("its insertion-order list names entry %u, out of range", ref);
    if (n == live)
      return fails("its insertion-order list is longer than its count of %u", live);
    const EntryHeader *e = entry(ref);
    if (e->prev != previous)
      return fails("entry %u has a wrong older-entry link", ref);
    if (n > 0 && e->seq <= lastSeq)
      return fails("its insertion-order list links back to the older entry %u", ref);
    if (!checkEntry(ref))
      return false;
    lastSeq = e->seq;
    previous = ref;
    ref = e->next;
  }
  if (n != live)
    return fails("its insertion-order list is shorter (%u) than its count", n);
  if (h_->tail != previous)
    return fails("its newest-entry link %u is wrong", h_->tail);
  // The index names those entries and nothing else.
  uint32_t used = 0;
  for (uint32_t i = 0; i <= s_->indexMask; ++i)
    used += index()[i] != 0;
  if (used != live)
    return fails("its index names %u entries, not its count", used);
  // The free list holds the rest of the entries handed out.
  uint32_t freeEntries = 0;
  for (uint32_t ref = h_->freeHead; ref != 0; ref = entry(ref)->next, ++freeEntries) {
    if (freeEntries == fresh - live)
      return fails("its free-entry list is longer than its %u free entries", freeEntries);
    if (!inPool(ref) || ref > fresh)
      return fails("its free-entry list names entry %u, out of range", ref);
    if (entry(ref)->live != 0)
      return fails("its free-entry list names the live entry %u", ref);
  }
  if (freeEntries != fresh - live)
    return fails("its free-entry list is shorter (%u) than its free entries", freeEntries);
  return true;
}

} // namespace sonde::values
