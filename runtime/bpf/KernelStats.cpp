#include "runtime/bpf/KernelStats.h"

#include "runtime/values/ScalarStats.h"
#include "runtime/values/SegmentShadow.h"
#include "runtime/values/StapArith.h"
#include "runtime/values/StatAccumulator.h"

#include <algorithm>
#include <atomic>
#include <cstddef>

namespace sonde::bpf {

namespace {

using values::stapDiv64;
using values::wrapAdd;
using values::wrapMul;
using values::wrapSub;

static_assert(values::kMaxBuckets == SONDE_KERNEL_STAT_BUCKETS);

// A values::StatBlock with room for every bucket, to fold into outside the segment.
struct WideBlock {
  values::StatBlock head;
  int64_t buckets[values::kMaxBuckets];
};
static_assert(offsetof(WideBlock, buckets) == sizeof(values::StatBlock));

uint32_t bucketsOf(const values::StatShape &shape) {
  return std::min(shape.buckets, values::kMaxBuckets);
}

KernelStatBlock toKernel(const values::StatBlock &b, const values::StatShape &shape) {
  KernelStatBlock k{};
  k.count = b.count, k.sum = b.sum, k.min = b.min, k.max = b.max;
  k.avg_s = b.avgS, k.m2 = b.m2, k.variance_s = b.varianceS;
  std::copy_n(values::blockBuckets(&b), bucketsOf(shape), k.buckets);
  return k;
}

// The overflow block of a scalar stats global, as its merge counts it: its
// samples at their mean (it keeps no Welford terms).
KernelStatBlock overflowOf(values::StatsHeader *h, const values::StatsHeader &shape) {
  values::StatBlock *b = values::statsSlot(h, shape, shape.slotCount);
  auto load = [](int64_t &field) {
    return std::atomic_ref<int64_t>(field).load(std::memory_order_relaxed);
  };
  KernelStatBlock k{};
  k.count = std::atomic_ref<int64_t>(b->count).load(std::memory_order_acquire);
  if (k.count == 0)
    return k;
  k.sum = load(b->sum), k.min = load(b->min), k.max = load(b->max);
  k.avg_s = stapDiv64(values::shiftLeft(k.sum, shape.shape.varianceShift), k.count);
  for (uint32_t i = 0; i < bucketsOf(shape.shape); ++i)
    k.buckets[i] = load(values::blockBuckets(b)[i]);
  return k;
}

} // namespace

void foldStatBlock(values::StatBlock &into, const KernelStatBlock &b,
                   const values::StatShape &shape) {
  // The kernel's per-CPU map holds the entry on every CPU: those that never
  // added to it hold an empty block, which stap's map would not have.
  if (b.count == 0)
    return;
  int64_t *buckets = values::blockBuckets(&into);
  if (into.count == 0) {
    into.count = b.count, into.sum = b.sum, into.min = b.min, into.max = b.max;
    into.avgS = b.avg_s, into.m2 = b.m2, into.varianceS = b.variance_s;
    std::copy_n(b.buckets, bucketsOf(shape), buckets);
    return;
  }
  int64_t count1 = into.count, avg1 = into.avgS;
  into.count = wrapAdd(into.count, b.count);
  into.sum = wrapAdd(into.sum, b.sum);
  into.min = std::min(into.min, b.min);
  into.max = std::max(into.max, b.max);
  if (shape.usesVariance) {
    into.avgS = stapDiv64(values::shiftLeft(into.sum, shape.varianceShift), into.count);
    int64_t d1 = wrapSub(avg1, into.avgS), d2 = wrapSub(b.avg_s, into.avgS);
    int64_t s11 = wrapMul(wrapMul(count1, d1), d1);
    int64_t s12 = wrapMul(count1 - 1, into.varianceS);
    int64_t s21 = wrapMul(wrapMul(b.count, d2), d2);
    int64_t s22 = wrapMul(b.count - 1, b.variance_s);
    into.varianceS = stapDiv64(wrapAdd(wrapAdd(s11, s12), wrapAdd(s21, s22)), into.count - 1);
    // What Welford would hold for that variance, for samples sonde adds later.
    into.m2 = wrapMul(into.varianceS, into.count - 1);
  }
  for (uint32_t i = 0; i < bucketsOf(shape); ++i)
    buckets[i] = wrapAdd(buckets[i], b.buckets[i]);
}

void scalarFromKernel(values::StatsHeader *h, const std::vector<KernelStatBlock> &cpus) {
  const values::StatsHeader &shape = *values::trustedStats(h);
  values::scalarStatsClear(h);
  for (size_t c = 0; c < cpus.size(); ++c)
    foldStatBlock(*values::statsSlot(h, shape, static_cast<uint32_t>(c % shape.slotCount)), cpus[c],
                  shape.shape);
}

std::vector<KernelStatBlock> scalarToKernel(values::StatsHeader *h, size_t cpuCount) {
  const values::StatsHeader &shape = *values::trustedStats(h);
  std::vector<WideBlock> wide(std::max<size_t>(cpuCount, 1));
  for (uint32_t i = 0; i < shape.slotCount; ++i)
    foldStatBlock(wide[i % wide.size()].head,
                  toKernel(*values::statsSlot(h, shape, i), shape.shape), shape.shape);
  foldStatBlock(wide[0].head, overflowOf(h, shape), shape.shape);
  std::vector<KernelStatBlock> out;
  out.reserve(wide.size());
  for (const WideBlock &w : wide)
    out.push_back(toKernel(w.head, shape.shape));
  return out;
}

void entryFromKernel(values::StatBlock &entry, const values::StatShape &shape,
                     const std::vector<KernelStatBlock> &cpus) {
  values::statReset(entry, shape);
  entry.m2 = 0;
  for (const KernelStatBlock &b : cpus)
    foldStatBlock(entry, b, shape);
}

std::vector<KernelStatBlock> entryToKernel(const values::StatBlock &entry,
                                           const values::StatShape &shape, size_t cpuCount) {
  std::vector<KernelStatBlock> out(std::max<size_t>(cpuCount, 1));
  if (entry.count != 0)
    out[0] = toKernel(entry, shape);
  return out;
}

} // namespace sonde::bpf
