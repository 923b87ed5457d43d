#include "runtime/values/MapTable.h"

#include "runtime/values/ScratchArena.h"

#include <algorithm>
#include <atomic>
#include <cstring>

namespace sonde::values {

namespace {

void setLive(EntryHeader *e, uint32_t v) {
  std::atomic_ref<uint32_t>(e->live).store(v, std::memory_order_release);
}

} // namespace

void copyBoundedString(char *dst, const char *src, uint32_t maxStringLen) {
  size_t n = strnlen(src, maxStringLen - 1);
  std::memmove(dst, src, n);
  dst[n] = '\0';
}

MapTable::Probe MapTable::prepareMatch(const sonde_key *keys, uint32_t wild) const {
  Probe p;
  p.keys = keys;
  p.hash = 0;
  for (uint32_t c = 0; c < h_->keyCount; ++c)
    p.lengths[c] = (wild & (1u << c)) || h_->keyKinds[c] == kKeyLong
                       ? 0
                       : static_cast<uint32_t>(strnlen(keys[c].s, h_->maxStringLen - 1));
  return p;
}

uint32_t MapTable::findWide(const sonde_key *keys) const { return find(prepare(keys)); }

uint32_t MapTable::findOneString(const char *s) const {
  auto length = static_cast<uint32_t>(strnlen(s, h_->maxStringLen - 1));
  auto hash = static_cast<uint32_t>(hashColumn(kHashMultiplier ^ 1, hashBytes(s, length)));
  const uint64_t *slots = index();
  uint32_t mask = h_->indexMask;
  for (uint32_t i = hash & mask, n = 0; n <= mask; i = (i + 1) & mask, ++n) {
    uint64_t slot = slots[i];
    if (slot == 0)
      return 0;
    auto ref = static_cast<uint32_t>(slot);
    if (static_cast<uint32_t>(slot >> 32) != hash || ref - 1 >= h_->maxEntries)
      continue;
    const char *stored = key(ref, 0);
    if (std::memcmp(stored, s, length) == 0 && stored[length] == '\0')
      return ref;
  }
  return 0;
}

uint32_t MapTable::allocateEntry() {
  if (h_->freeHead != 0) {
    uint32_t ref = h_->freeHead;
    h_->freeHead = entry(ref)->next;
    return ref;
  }
  return ++h_->fresh;
}

void MapTable::placeInIndex(uint32_t ref, uint32_t hash) {
  uint64_t *slots = index();
  uint32_t mask = h_->indexMask;
  uint32_t i = hash & mask;
  while (slots[i] != 0)
    i = (i + 1) & mask;
  slots[i] = uint64_t{hash} << 32 | ref;
  entry(ref)->slot = i;
}

void MapTable::linkNewest(uint32_t ref) {
  EntryHeader *e = entry(ref);
  e->prev = h_->tail;
  e->next = 0;
  if (h_->tail)
    entry(h_->tail)->next = ref;
  else
    h_->head = ref;
  h_->tail = ref;
}

void MapTable::unlink(uint32_t ref) {
  EntryHeader *e = entry(ref);
  if (e->prev)
    entry(e->prev)->next = e->next;
  else
    h_->head = e->next;
  if (e->next)
    entry(e->next)->prev = e->prev;
  else
    h_->tail = e->prev;
}

void MapTable::resetValue(uint32_t ref) {
  char *v = value(ref);
  switch (h_->valueKind) {
  case kValueLong: std::memset(v, 0, 8); break;
  case kValueString:
    v[0] = '\0';
    v[h_->maxStringLen - 1] = '\0';
    break;
  default: std::memset(v, 0, statBlockSize(h_->valueShape.buckets)); break;
  }
}

uint32_t MapTable::insert(const Probe &p) {
  if (h_->count >= h_->maxEntries) {
    if (!h_->wrap || h_->head == 0)
      return 0;
    remove(h_->head);
  }
  uint32_t ref = allocateEntry();
  EntryHeader *e = entry(ref);
  for (uint32_t c = 0; c < h_->keyCount; ++c) {
    if (h_->keyKinds[c] == kKeyLong)
      std::memcpy(key(ref, c), &p.keys[c].l, 8);
    else
      copyBoundedString(key(ref, c), p.keys[c].s, h_->maxStringLen);
  }
  resetValue(ref);
  e->hash = p.hash;
  e->seq = h_->nextSeq++;
  // From here on the entry is complete: repair() may trust it.
  setLive(e, 1);
  placeInIndex(ref, p.hash);
  linkNewest(ref);
  ++h_->count;
  return ref;
}

void MapTable::remove(uint32_t ref) {
  EntryHeader *e = entry(ref);
  setLive(e, 0);
  // Backward-shift deletion: pull each later member of the cluster into the hole
  // unless its home slot lies cyclically within (hole, position].
  uint64_t *slots = index();
  uint32_t mask = h_->indexMask;
  uint32_t hole = e->slot;
  for (uint32_t j = (hole + 1) & mask; slots[j] != 0; j = (j + 1) & mask) {
    uint32_t home = static_cast<uint32_t>(slots[j] >> 32) & mask;
    if (((j - home) & mask) >= ((j - hole) & mask)) {
      slots[hole] = slots[j];
      entry(static_cast<uint32_t>(slots[j]))->slot = hole;
      hole = j;
    }
  }
  slots[hole] = 0;
  unlink(ref);
  e->next = h_->freeHead;
  h_->freeHead = ref;
  --h_->count;
}

void MapTable::clear() {
  uint64_t *slots = index();
  for (uint32_t ref = h_->head; ref != 0;) {
    EntryHeader *e = entry(ref);
    setLive(e, 0);
    slots[e->slot] = 0;
    ref = e->next;
  }
  h_->head = h_->tail = 0;
  h_->freeHead = 0;
  h_->fresh = 0;
  h_->count = 0;
}

void MapTable::repair() {
  if (h_->fresh > h_->maxEntries)
    h_->fresh = h_->maxEntries;
  std::memset(index(), 0, (uint64_t{h_->indexMask} + 1) * 8);
  h_->head = h_->tail = h_->freeHead = 0;
  h_->count = 0;

  struct Live {
    uint64_t seq;
    uint32_t ref;
  };
  ScratchMark mark;
  auto *live = static_cast<Live *>(scratchAllocate(sizeof(Live) * (h_->fresh + 1), mark));
  uint32_t n = 0;
  for (uint32_t ref = h_->fresh; ref >= 1; --ref) {
    EntryHeader *e = entry(ref);
    if (e->live != 1 || !live) {
      // Unusable or no memory to order it: recycle (the latter loses the entry).
      e->live = 0;
      e->next = h_->freeHead;
      h_->freeHead = ref;
      continue;
    }
    for (uint32_t c = 0; c < h_->keyCount; ++c)
      if (h_->keyKinds[c] == kKeyString)
        key(ref, c)[h_->maxStringLen - 1] = '\0';
    if (h_->valueKind == kValueString)
      value(ref)[h_->maxStringLen - 1] = '\0';
    live[n++] = {e->seq, ref};
  }
  if (!live)
    return;
  std::sort(live, live + n, [](const Live &a, const Live &b) { return a.seq < b.seq; });
  for (uint32_t i = 0; i < n; ++i) {
    EntryHeader *e = entry(live[i].ref);
    placeInIndex(live[i].ref, e->hash);
    linkNewest(live[i].ref);
    if (e->seq >= h_->nextSeq)
      h_->nextSeq = e->seq + 1;
  }
  h_->count = n;
  scratchRelease(mark);
}

} // namespace sonde::values
