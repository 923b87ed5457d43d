// Bucket arithmetic of @hist_log and @hist_linear (stap's runtime/stat-common.c)
// that the renderer and pass 2 need: row labels and bucket counts. Which bucket a
// value lands in is the aggregates' business (runtime/values/StatAccumulator.h).
#include "runtime/format/FormatAbi.h"

#include <cstdint>

extern "C" int64_t sonde_hist_log_bucket_value(int32_t bucket) {
  if (bucket == SONDE_HIST_LOG_BUCKET0)
    return 0;
  if (bucket < SONDE_HIST_LOG_BUCKET0) // -2^(63 - bucket), i.e. INT64_MIN >> bucket
    return static_cast<int64_t>(~((uint64_t{1} << (63 - bucket)) - 1));
  return static_cast<int64_t>(uint64_t{1} << (bucket - SONDE_HIST_LOG_BUCKET0 - 1));
}

extern "C" int32_t sonde_hist_linear_bucket_count(int64_t start, int64_t stop, int64_t interval) {
  if (interval <= 0)
    return 0;
  // Buckets for the range plus one each for underflow and overflow.
  const __int128 buckets = (static_cast<__int128>(stop) - start) / interval + 3;
  return buckets < 3 || buckets > SONDE_HIST_MAX_BUCKETS ? 0 : static_cast<int32_t>(buckets);
}
