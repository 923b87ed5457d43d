// Bucket arithmetic of @hist_log and @hist_linear (stap's runtime/stat-common.c),
// shared by the aggregates that fill histograms and the renderer that labels them.
#include "runtime/format/FormatAbi.h"

#include <cstdint>

extern "C" int32_t sonde_hist_log_bucket(int64_t value) {
  if (value == 0)
    return SONDE_HIST_LOG_BUCKET0;
  const bool negative = value < 0;
  // |INT64_MIN| is 2^63 here, which lands in bucket 0.
  const uint64_t magnitude =
      negative ? 0 - static_cast<uint64_t>(value) : static_cast<uint64_t>(value);
  // Bucket 65 + k holds [2^k, 2^(k+1)); the negatives mirror it below 64.
  const int32_t bucket = SONDE_HIST_LOG_BUCKETS - __builtin_clzll(magnitude);
  return negative ? SONDE_HIST_LOG_BUCKETS - bucket : bucket;
}

extern "C" int64_t sonde_hist_log_bucket_value(int32_t bucket) {
  if (bucket == SONDE_HIST_LOG_BUCKET0)
    return 0;
  if (bucket < SONDE_HIST_LOG_BUCKET0) // -2^(63 - bucket), i.e. INT64_MIN >> bucket
    return static_cast<int64_t>(~((uint64_t{1} << (63 - bucket)) - 1));
  return static_cast<int64_t>(uint64_t{1} << (bucket - SONDE_HIST_LOG_BUCKET0 - 1));
}

extern "C" int32_t sonde_hist_linear_bucket(int64_t value, int64_t start, int64_t interval,
                                            int32_t bucket_count) {
  const int64_t offset =
      static_cast<int64_t>(static_cast<uint64_t>(value) - static_cast<uint64_t>(start));
  int64_t bucket = 0; // underflow
  if (offset >= 0)
    bucket =
        static_cast<int64_t>(static_cast<uint64_t>(offset) / static_cast<uint64_t>(interval)) + 1;
  return bucket >= bucket_count - 1 ? bucket_count - 1 : static_cast<int32_t>(bucket);
}

extern "C" int32_t sonde_hist_linear_bucket_count(int64_t start, int64_t stop, int64_t interval) {
  if (interval <= 0)
    return 0;
  // Buckets for the range plus one each for underflow and overflow.
  const __int128 buckets = (static_cast<__int128>(stop) - start) / interval + 3;
  return buckets < 3 || buckets > SONDE_HIST_MAX_BUCKETS ? 0 : static_cast<int32_t>(buckets);
}
