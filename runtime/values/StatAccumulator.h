// The arithmetic of one stats accumulator, exactly as stap's runtime does it
// (stat-common.c __stp_stat_add, stat.c _stp_stat_get, map.c _new_map_copy_stat),
// including its integer Welford update with a 32-bit `delta` and its wrapping.
// The caller owns the block (slot lock or map lock); nothing here synchronizes.
#pragma once

#include "runtime/values/SegmentFormat.h"
#include "runtime/values/StapArith.h"

namespace sonde::values {

// Empties a block (stap's _stp_stat_clear_data).
void statReset(StatBlock &b, const StatShape &shape);

// Folds per-CPU blocks into one value with stap's total-variance formula. The sums
// are taken modulo 2^64 like stap's, so one pass over the blocks gives its exact S1.
class SlotMerge {
public:
  explicit SlotMerge(const StatShape &shape, bool withBuckets);
  void add(const StatBlock &b) { add(b, blockBuckets(&b)); }
  // A block whose buckets are stored elsewhere.
  void add(const StatBlock &scalars, const int64_t *buckets);
  void finish(sonde_stat_summary &out) const;

private:
  const StatShape &shape_;
  bool withBuckets_;
  int64_t count_ = 0, sum_ = 0, min_ = 0, max_ = 0;
  int64_t weightedAvg_ = 0, weightedAvgSquares_ = 0, weightedVariance_ = 0;
  int64_t buckets_[kMaxBuckets] = {};
};

// The value of one array entry (stap aggregates a single CPU's entry by copying it).
void summarizeEntry(const StatBlock &b, const StatShape &shape, bool withBuckets,
                    sonde_stat_summary &out);

// What makes a block impossible for stap's arithmetic to have produced (a
// negative count or bucket, min above max, buckets that do not add up to the
// count), or null: a check for blocks other processes could have written.
const char *statBlockProblem(const StatBlock &b, const StatShape &shape);

// @count ... @variance of a summary; SONDE_ERR_EMPTY_AGGREGATE as stap's translator.
int extractStat(const sonde_stat_summary &s, int32_t extractor, int64_t *out);

// @hist_*(x)[index] of a summary.
int readBucket(const sonde_stat_summary &s, int64_t index, int64_t *out);

// Lower bound of a bucket, as stap labels histogram rows.
int64_t bucketValue(const sonde_stat_summary &s, uint32_t bucket);

// stap's _stp_val_to_bucket: 0 has bucket 64, v > 0 goes to 65 + floor(log2 v), and
// negatives mirror that around 64 (so INT64_MIN lands in bucket 0).
inline uint32_t logHistogramBucket(int64_t v) {
  if (v == 0)
    return kLogBucketZero;
  uint64_t magnitude = v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  uint32_t res = kLogBucketZero + 1 + (63 - static_cast<uint32_t>(__builtin_clzll(magnitude)));
  if (v < 0)
    res = kMaxBuckets - res;
  return res < kMaxBuckets ? res : kMaxBuckets - 1;
}

// Bucket index of v in a histogram of this shape (the shape has one).
inline uint32_t histogramBucket(const StatShape &shape, int64_t v) {
  if (shape.histKind == SONDE_STAT_HIST_LOG)
    return logHistogramBucket(v);
  // Linear: bucket 0 is below `low`, the last one at or above the top.
  int64_t off = wrapSub(v, shape.low);
  uint64_t index =
      off < 0 ? 0 : static_cast<uint64_t>(off) / static_cast<uint64_t>(shape.width) + 1;
  return index >= shape.buckets - 1 ? shape.buckets - 1 : static_cast<uint32_t>(index);
}

// s <<< v on one block (inline: it is the whole of `<<<` once the slot is held).
inline void statAdd(StatBlock &b, const StatShape &shape, int64_t v) {
  if (b.count == 0) {
    b.count = 1;
    b.sum = b.min = b.max = v;
    b.avgS = shiftLeft(v, shape.varianceShift);
    b.m2 = 0;
  } else {
    b.count = wrapAdd(b.count, 1);
    b.sum = wrapAdd(b.sum, v);
    if (v > b.max)
      b.max = v;
    if (v < b.min)
      b.min = v;
    if (shape.usesVariance) {
      // Welford, with stap's `int delta` truncating the difference to 32 bits.
      int64_t scaled = shiftLeft(v, shape.varianceShift);
      int32_t delta = static_cast<int32_t>(static_cast<uint32_t>(wrapSub(scaled, b.avgS)));
      b.avgS = wrapAdd(b.avgS, stapDiv64(delta, b.count));
      b.m2 = wrapAdd(b.m2, wrapMul(delta, wrapSub(scaled, b.avgS)));
      b.varianceS = stapDiv64(b.m2, b.count - 1);
    }
  }
  if (shape.histKind != SONDE_STAT_HIST_NONE)
    ++blockBuckets(&b)[histogramBucket(shape, v)];
}

} // namespace sonde::values
