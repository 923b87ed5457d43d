#include "runtime/values/MapIteration.h"

#include "runtime/values/ScratchArena.h"
#include "runtime/values/StatAccumulator.h"

#include <algorithm>
#include <cstring>
#include <new>

namespace sonde::values {

namespace {

struct SortItem {
  int64_t key;
  uint32_t ref;
  uint32_t rank; // position in insertion order: the stable tie-break
};

struct IterState {
  MapHeader *map;
  SortItem *items; // null: walk the order list
  uint32_t count, pos;
  uint32_t current, nextRef;
  int64_t remaining;
  ScratchMark mark;
  uint32_t holdsScratch;
};
static_assert(sizeof(IterState) <= sizeof(sonde_iter));
static_assert(alignof(IterState) <= alignof(sonde_iter));

IterState *state(sonde_iter *it) { return std::launder(reinterpret_cast<IterState *>(it)); }
const IterState *state(const sonde_iter *it) {
  return std::launder(reinterpret_cast<const IterState *>(it));
}

int64_t numericSortKey(const MapTable &t, uint32_t ref, const sonde_foreach_spec &spec) {
  const MapHeader &h = t.header();
  if (spec.sort_column > 0)
    return t.keyLong(ref, static_cast<uint32_t>(spec.sort_column - 1));
  if (h.valueKind == kValueLong)
    return *reinterpret_cast<const int64_t *>(t.value(ref));
  sonde_stat_summary s;
  summarizeEntry(*t.statValue(ref), h.valueShape, false, s);
  int64_t v = 0;
  extractStat(s, spec.extractor, &v);
  return v;
}

bool sortsByString(const MapHeader &h, int32_t column) {
  if (column == SONDE_SORT_VALUE)
    return h.valueKind == kValueString;
  return h.keyKinds[column - 1] == kKeyString;
}

// Strings compare in place, in memory other processes may write meanwhile, so
// the order may not be consistent: heap sort (std::partial_sort) stays within
// the array whatever the comparisons say, where std::sort's unguarded loops
// would not; and a missing terminator stops at the buffer's end.
int compareStored(const char *a, const char *b, uint32_t maxStringLen) {
  return std::strncmp(a, b, maxStringLen);
}

void sortItems(const MapTable &t, const sonde_foreach_spec &spec, SortItem *items, uint32_t n,
               uint32_t keep) {
  bool desc = spec.descending != 0;
  auto order = [&](auto better, bool inPlace) {
    auto cmp = [&](const SortItem &a, const SortItem &b) {
      int c = better(a, b);
      return c != 0 ? (desc ? c > 0 : c < 0) : a.rank < b.rank;
    };
    if (keep < n || inPlace)
      std::partial_sort(items, items + keep, items + n, cmp);
    else
      std::sort(items, items + n, cmp);
  };
  if (sortsByString(t.header(), spec.sort_column)) {
    uint32_t column = static_cast<uint32_t>(spec.sort_column);
    uint32_t cap = t.header().maxStringLen;
    auto text = [&](uint32_t ref) { return column == 0 ? t.value(ref) : t.key(ref, column - 1); };
    order([&](const SortItem &a,
              const SortItem &b) { return compareStored(text(a.ref), text(b.ref), cap); },
          true);
  } else {
    order(
        [](const SortItem &a, const SortItem &b) {
          return a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
        },
        false);
  }
}

} // namespace

int foreachBegin(const MapHeader *m, const sonde_foreach_spec &spec, sonde_iter *it) {
  IterState *st = new (it) IterState{};
  MapTable t(m);
  st->map = const_cast<MapHeader *>(m);
  if (spec.limit <= 0)
    return SONDE_OK;
  if (spec.sort_column == SONDE_SORT_NONE && !spec.slice) {
    st->nextRef = t.oldest();
    st->remaining = spec.limit;
    return SONDE_OK;
  }
  uint32_t n = t.count();
  if (n == 0)
    return SONDE_OK;
  auto *items = static_cast<SortItem *>(scratchAllocate(sizeof(SortItem) * n, st->mark));
  if (!items)
    return SONDE_ERR_NO_MEMORY;
  st->holdsScratch = 1;
  st->items = items;
  bool numeric = spec.sort_column != SONDE_SORT_NONE && !sortsByString(*m, spec.sort_column);
  uint32_t rank = 0;
  for (uint32_t ref = t.oldest(); ref != 0 && rank < n; ref = t.nextNewer(ref), ++rank)
    items[rank] = {numeric ? numericSortKey(t, ref, spec) : 0, ref, rank};
  uint32_t keep = spec.limit < rank ? static_cast<uint32_t>(spec.limit) : rank;
  if (spec.sort_column != SONDE_SORT_NONE)
    sortItems(t, spec, items, rank, keep);
  // stap counts `limit` over the entries it visits before testing the slice.
  if (spec.slice) {
    MapTable::Probe slice = t.prepareMatch(spec.slice, spec.slice_wild);
    uint32_t kept = 0;
    for (uint32_t i = 0; i < keep; ++i)
      if (t.matches(items[i].ref, slice, spec.slice_wild))
        items[kept++] = items[i];
    keep = kept;
  }
  st->count = keep;
  return SONDE_OK;
}

int foreachNext(sonde_iter *it) {
  IterState *st = state(it);
  if (st->items) {
    if (st->pos >= st->count)
      return 0;
    st->current = st->items[st->pos++].ref;
    return 1;
  }
  // `pos` counts the entries walked: never more than the array holds.
  MapTable t(st->map);
  if (st->remaining <= 0 || st->nextRef == 0 || st->pos >= t.header().maxEntries)
    return 0;
  st->current = st->nextRef;
  st->nextRef = t.nextNewer(st->current);
  --st->remaining;
  ++st->pos;
  return 1;
}

void foreachEnd(sonde_iter *it) {
  IterState *st = state(it);
  if (st->holdsScratch)
    scratchRelease(st->mark);
  st->holdsScratch = 0;
  st->items = nullptr;
  st->count = st->pos = 0;
  st->remaining = 0;
}

MapTable foreachTable(const sonde_iter *it) { return MapTable(state(it)->map); }
uint32_t foreachEntry(const sonde_iter *it) { return state(it)->current; }

} // namespace sonde::values
