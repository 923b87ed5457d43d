#include "runtime/values/StatAccumulator.h"

#include "runtime/values/StapArith.h"

#include <cstring>

namespace sonde::values {

namespace {

void fillShape(const StatShape &shape, sonde_stat_summary &out) {
  out.hist_kind = shape.histKind;
  out.bucket_count = shape.buckets;
  out.hist_low = shape.low;
  out.hist_high = shape.high;
  out.hist_width = shape.width;
}

} // namespace

void statReset(StatBlock &b, const StatShape &shape) {
  b.count = b.sum = b.min = b.max = 0;
  b.avgS = b.varianceS = 0;
  if (shape.buckets)
    std::memset(blockBuckets(&b), 0, 8ull * shape.buckets);
}

SlotMerge::SlotMerge(const StatShape &shape, bool withBuckets)
    : shape_(shape), withBuckets_(withBuckets) {}

void SlotMerge::add(const StatBlock &b, const int64_t *buckets) {
  if (b.count == 0)
    return;
  if (count_ == 0) {
    min_ = b.min;
    max_ = b.max;
  }
  count_ = wrapAdd(count_, b.count);
  sum_ = wrapAdd(sum_, b.sum);
  if (b.max > max_)
    max_ = b.max;
  if (b.min < min_)
    min_ = b.min;
  // stap's S1 = sum c*(avg_i - A)^2 expands, modulo 2^64, to P2 - 2*A*P1 + A*A*P0.
  int64_t weighted = wrapMul(b.count, b.avgS);
  weightedAvg_ = wrapAdd(weightedAvg_, weighted);
  weightedAvgSquares_ = wrapAdd(weightedAvgSquares_, wrapMul(weighted, b.avgS));
  weightedVariance_ = wrapAdd(weightedVariance_, wrapMul(b.count - 1, b.varianceS));
  if (withBuckets_)
    for (uint32_t i = 0; i < shape_.buckets; ++i)
      buckets_[i] = wrapAdd(buckets_[i], buckets[i]);
}

void SlotMerge::finish(sonde_stat_summary &out) const {
  out.count = count_;
  out.sum = sum_;
  out.min = min_;
  out.max = max_;
  out.avg = stapDiv64(sum_, count_);
  int64_t avgS = stapDiv64(shiftLeft(sum_, shape_.varianceShift), count_);
  int64_t s1 = wrapAdd(wrapSub(weightedAvgSquares_, wrapMul(wrapMul(2, avgS), weightedAvg_)),
                       wrapMul(wrapMul(avgS, avgS), count_));
  int64_t varianceS = stapDiv64(wrapAdd(s1, weightedVariance_), count_ - 1);
  out.variance = shiftRight(varianceS, 2 * shape_.varianceShift);
  fillShape(shape_, out);
  if (withBuckets_)
    std::memcpy(out.buckets, buckets_, 8ull * shape_.buckets);
}

void summarizeEntry(const StatBlock &b, const StatShape &shape, bool withBuckets,
                    sonde_stat_summary &out) {
  out.count = b.count;
  out.sum = b.sum;
  out.min = b.min;
  out.max = b.max;
  out.avg = stapDiv64(b.sum, b.count);
  out.variance = shiftRight(b.varianceS, 2 * shape.varianceShift);
  fillShape(shape, out);
  if (withBuckets)
    std::memcpy(out.buckets, blockBuckets(&b), 8ull * shape.buckets);
}

const char *statBlockProblem(const StatBlock &b, const StatShape &shape) {
  if (b.count < 0)
    return "a stats value has a negative count";
  if (b.count > 0 && b.min > b.max)
    return "a stats value has its minimum above its maximum";
  if (shape.histKind == SONDE_STAT_HIST_NONE)
    return nullptr;
  int64_t total = 0;
  for (uint32_t i = 0; i < shape.buckets; ++i) {
    int64_t n = blockBuckets(&b)[i];
    if (n < 0)
      return "a histogram bucket has a negative count";
    total = wrapAdd(total, n);
  }
  return total == b.count ? nullptr : "a histogram's buckets do not add up to its count";
}

int extractStat(const sonde_stat_summary &s, int32_t extractor, int64_t *out) {
  switch (extractor) {
  case SONDE_STAT_COUNT: *out = s.count; return SONDE_OK;
  case SONDE_STAT_SUM: *out = s.count ? s.sum : 0; return SONDE_OK;
  default: break;
  }
  *out = 0;
  if (s.count == 0)
    return SONDE_ERR_EMPTY_AGGREGATE;
  switch (extractor) {
  case SONDE_STAT_MIN: *out = s.min; break;
  case SONDE_STAT_MAX: *out = s.max; break;
  case SONDE_STAT_AVG: *out = s.avg; break;
  case SONDE_STAT_VARIANCE: *out = s.variance; break;
  default: break;
  }
  return SONDE_OK;
}

int readBucket(const sonde_stat_summary &s, int64_t index, int64_t *out) {
  *out = 0;
  if (s.count == 0)
    return SONDE_ERR_EMPTY_AGGREGATE;
  if (index < 0 || index >= static_cast<int64_t>(s.bucket_count))
    return SONDE_ERR_HIST_INDEX;
  *out = s.buckets[index];
  return SONDE_OK;
}

int64_t bucketValue(const sonde_stat_summary &s, uint32_t bucket) {
  if (s.hist_kind == SONDE_STAT_HIST_LINEAR) {
    if (bucket == 0)
      return s.hist_low;
    if (bucket + 1 >= s.bucket_count) // overflow row, labelled after the last full bucket
      return wrapAdd(s.hist_low, wrapMul(static_cast<int64_t>(bucket) - 2, s.hist_width));
    return wrapAdd(s.hist_low, wrapMul(static_cast<int64_t>(bucket) - 1, s.hist_width));
  }
  if (bucket == kLogBucketZero)
    return 0;
  if (bucket < kLogBucketZero)
    return INT64_MIN >> bucket;
  return int64_t{1} << (bucket - kLogBucketZero - 1);
}

} // namespace sonde::values
