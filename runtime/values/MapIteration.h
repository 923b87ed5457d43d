// foreach over an array global.
//
// Order, as stap's kernel runtime (map.c) gives it: unsorted loops visit entries in
// insertion order (oldest first; re-inserting a deleted key makes it newest), and
// sorted loops are stable, so ties keep insertion order in either direction; `limit`
// keeps the first N of that order; with a slice (`foreach ([a, b] in x[*, 5])`),
// as in stap's translator, `limit` counts the entries visited before the slice
// test, not the matching ones. Unlike stap we never reorder the array itself
// when sorting, so a later unsorted loop still sees insertion order.
//
// An unsorted, unsliced loop walks the live order list and needs no memory. Any
// other loop snapshots (sort key, entry, rank) triples into per-thread scratch
// memory and sorts them in place (std::sort / std::partial_sort, no allocation).
#pragma once

#include "runtime/values/MapTable.h"

namespace sonde::values {

int foreachBegin(const MapHeader *m, const sonde_foreach_spec &spec, sonde_iter *it);
int foreachNext(sonde_iter *it);
void foreachEnd(sonde_iter *it);

// The table and entry (number + 1) the iterator stands on.
MapTable foreachTable(const sonde_iter *it);
uint32_t foreachEntry(const sonde_iter *it);

} // namespace sonde::values
