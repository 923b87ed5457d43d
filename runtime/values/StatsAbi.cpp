// C ABI: scalar stats globals and histogram labels.
#include "runtime/values/ScalarStats.h"
#include "runtime/values/StatAccumulator.h"
#include "runtime/values/ValueAbi.h"

using namespace sonde::values;

namespace {

// Reading takes the slot locks, hence the const_cast: a slot lock is not state.
StatsHeader *stats(const sonde_stats *s) {
  return globalData<StatsHeader>(reinterpret_cast<GlobalHeader *>(const_cast<sonde_stats *>(s)));
}

} // namespace

extern "C" {

void sonde_stats_add(sonde_stats *s, int64_t v) { scalarStatsAdd(stats(s), v); }

int sonde_stats_extract(const sonde_stats *s, int32_t extractor, int64_t *out) {
  sonde_stat_summary summary;
  scalarStatsSummary(stats(s), false, summary);
  return extractStat(summary, extractor, out);
}

int sonde_stats_bucket(const sonde_stats *s, int64_t index, int64_t *out) {
  sonde_stat_summary summary;
  scalarStatsSummary(stats(s), true, summary);
  return readBucket(summary, index, out);
}

int sonde_stats_summary(const sonde_stats *s, sonde_stat_summary *out) {
  scalarStatsSummary(stats(s), true, *out);
  return out->count ? SONDE_OK : SONDE_ERR_EMPTY_AGGREGATE;
}

void sonde_stats_clear(sonde_stats *s) { scalarStatsClear(stats(s)); }

int64_t sonde_hist_bucket_value(const sonde_stat_summary *summary, uint32_t bucket) {
  return bucketValue(*summary, bucket);
}

} // extern "C"
