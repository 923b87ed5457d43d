// C ABI: array globals and foreach.
#include "runtime/values/MapIteration.h"
#include "runtime/values/MapTable.h"
#include "runtime/values/ScratchArena.h"
#include "runtime/values/StatAccumulator.h"
#include "runtime/values/ValueAbi.h"

#include <cstring>

using namespace sonde::values;

namespace {

MapTable table(sonde_map *m) {
  return MapTable(globalData<MapHeader>(reinterpret_cast<GlobalHeader *>(m)));
}
MapTable table(const sonde_map *m) {
  return MapTable(globalData<MapHeader>(reinterpret_cast<const GlobalHeader *>(m)));
}

int64_t &longValue(const MapTable &t, uint32_t ref) {
  return *reinterpret_cast<int64_t *>(t.value(ref));
}

// Columns a wildcard mask leaves concrete, limited to the map's own columns.
uint32_t wildMask(const MapTable &t, uint32_t wild) {
  return wild & ((1u << t.header().keyCount) - 1);
}

int entrySummary(const MapTable &t, uint32_t ref, bool withBuckets, sonde_stat_summary *out) {
  if (ref == 0) {
    std::memset(out, 0, sizeof(*out) - sizeof(out->buckets));
    const StatShape &shape = t.header().valueShape;
    out->hist_kind = shape.histKind;
    out->bucket_count = shape.buckets;
    return SONDE_ERR_EMPTY_AGGREGATE;
  }
  summarizeEntry(*t.statValue(ref), t.header().valueShape, withBuckets, *out);
  return out->count ? SONDE_OK : SONDE_ERR_EMPTY_AGGREGATE;
}

} // namespace

extern "C" {

int64_t sonde_map_get_long(const sonde_map *m, const sonde_key *keys) {
  MapTable t = table(m);
  uint32_t ref = t.find(keys);
  return ref ? longValue(t, ref) : 0;
}

void sonde_map_get_string(const sonde_map *m, const sonde_key *keys, char *out) {
  MapTable t = table(m);
  uint32_t ref = t.find(keys);
  if (ref)
    copyBoundedString(out, t.value(ref), t.header().maxStringLen);
  else
    out[0] = '\0';
}

int sonde_map_set_long(sonde_map *m, const sonde_key *keys, int64_t v) {
  MapTable t = table(m);
  uint32_t ref = t.findOrInsert(keys);
  if (!ref)
    return SONDE_ERR_MAP_FULL;
  longValue(t, ref) = v;
  return SONDE_OK;
}

int sonde_map_set_string(sonde_map *m, const sonde_key *keys, const char *v) {
  MapTable t = table(m);
  uint32_t ref = t.findOrInsert(keys);
  if (!ref)
    return SONDE_ERR_MAP_FULL;
  copyBoundedString(t.value(ref), v, t.header().maxStringLen);
  return SONDE_OK;
}

int sonde_map_ref_long(sonde_map *m, const sonde_key *keys, int64_t **out) {
  MapTable t = table(m);
  uint32_t ref = t.findOrInsert(keys);
  *out = ref ? &longValue(t, ref) : nullptr;
  return ref ? SONDE_OK : SONDE_ERR_MAP_FULL;
}

int sonde_map_ref_string(sonde_map *m, const sonde_key *keys, char **out) {
  MapTable t = table(m);
  uint32_t ref = t.findOrInsert(keys);
  *out = ref ? t.value(ref) : nullptr;
  return ref ? SONDE_OK : SONDE_ERR_MAP_FULL;
}

int sonde_map_exists(const sonde_map *m, const sonde_key *keys) {
  MapTable t = table(m);
  return t.find(keys) != 0;
}

int sonde_map_exists_wild(const sonde_map *m, const sonde_key *keys, uint32_t wild) {
  MapTable t = table(m);
  wild = wildMask(t, wild);
  if (wild == 0)
    return t.find(keys) != 0;
  MapTable::Probe p = t.prepareMatch(keys, wild);
  for (uint32_t ref = t.oldest(), n = 0; ref != 0 && n < t.header().maxEntries;
       ref = t.nextNewer(ref), ++n)
    if (t.matches(ref, p, wild))
      return 1;
  return 0;
}

void sonde_map_delete(sonde_map *m, const sonde_key *keys) {
  MapTable t = table(m);
  if (uint32_t ref = t.find(keys))
    t.remove(ref);
}

void sonde_map_delete_wild(sonde_map *m, const sonde_key *keys, uint32_t wild) {
  MapTable t = table(m);
  wild = wildMask(t, wild);
  if (wild == 0) {
    sonde_map_delete(m, keys);
    return;
  }
  MapTable::Probe p = t.prepareMatch(keys, wild);
  for (uint32_t ref = t.oldest(), n = 0; ref != 0 && n < t.header().maxEntries; ++n) {
    uint32_t next = t.nextNewer(ref);
    if (t.matches(ref, p, wild))
      t.remove(ref);
    ref = next;
  }
}

void sonde_map_clear(sonde_map *m) { table(m).clear(); }

uint32_t sonde_map_count(const sonde_map *m) { return table(m).count(); }

int sonde_map_stats_add(sonde_map *m, const sonde_key *keys, int64_t v) {
  MapTable t = table(m);
  uint32_t ref = t.findOrInsert(keys);
  if (!ref)
    return SONDE_ERR_MAP_FULL;
  statAdd(*t.statValue(ref), t.header().valueShape, v);
  return SONDE_OK;
}

int sonde_map_stats_extract(const sonde_map *m, const sonde_key *keys, int32_t extractor,
                            int64_t *out) {
  MapTable t = table(m);
  sonde_stat_summary s;
  entrySummary(t, t.find(keys), false, &s);
  return extractStat(s, extractor, out);
}

int sonde_map_stats_bucket(const sonde_map *m, const sonde_key *keys, int64_t index, int64_t *out) {
  MapTable t = table(m);
  sonde_stat_summary s;
  entrySummary(t, t.find(keys), true, &s);
  return readBucket(s, index, out);
}

int sonde_map_stats_summary(const sonde_map *m, const sonde_key *keys, sonde_stat_summary *out) {
  MapTable t = table(m);
  return entrySummary(t, t.find(keys), true, out);
}

int sonde_foreach_begin(const sonde_map *m, const sonde_foreach_spec *spec, sonde_iter *it) {
  return foreachBegin(globalData<MapHeader>(reinterpret_cast<const GlobalHeader *>(m)), *spec, it);
}

int sonde_foreach_next(sonde_iter *it) { return foreachNext(it); }

int64_t sonde_iter_key_long(const sonde_iter *it, uint32_t column) {
  return foreachTable(it).keyLong(foreachEntry(it), column - 1);
}

const char *sonde_iter_key_string(const sonde_iter *it, uint32_t column) {
  return foreachTable(it).key(foreachEntry(it), column - 1);
}

int64_t sonde_iter_value_long(const sonde_iter *it) {
  return longValue(foreachTable(it), foreachEntry(it));
}

const char *sonde_iter_value_string(const sonde_iter *it) {
  return foreachTable(it).value(foreachEntry(it));
}

int sonde_iter_stats_extract(const sonde_iter *it, int32_t extractor, int64_t *out) {
  sonde_stat_summary s;
  entrySummary(foreachTable(it), foreachEntry(it), false, &s);
  return extractStat(s, extractor, out);
}

int sonde_iter_stats_summary(const sonde_iter *it, sonde_stat_summary *out) {
  return entrySummary(foreachTable(it), foreachEntry(it), true, out);
}

void sonde_foreach_end(sonde_iter *it) { foreachEnd(it); }

void sonde_scratch_release_all(void) { scratchReleaseAll(); }

} // extern "C"
