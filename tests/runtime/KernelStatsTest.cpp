// Kernel probes' aggregates (runtime/bpf/KernelStatBlock.h, KernelStats.h) read
// through the same extractors as userspace probes' ones: the kernel's `<<<` step
// against values::statAdd, and the kernel's per-CPU blocks, once in the segment,
// against the same samples added by the userspace path.
#include "ValuesTestSupport.h"

#include "runtime/bpf/KernelStats.h"
#include "runtime/values/MapTable.h"
#include "runtime/values/ScalarStats.h"
#include "runtime/values/SegmentShadow.h"
#include "runtime/values/StatAccumulator.h"

#include <cstring>
#include <random>
#include <vector>

namespace sonde::values::test {
namespace {

using bpf::KernelStatBlock;

constexpr int32_t kExtractors[] = {SONDE_STAT_COUNT, SONDE_STAT_SUM, SONDE_STAT_MIN,
                                   SONDE_STAT_MAX,   SONDE_STAT_AVG, SONDE_STAT_VARIANCE};
constexpr const char *kExtractorNames[] = {"@count", "@sum", "@min", "@max", "@avg", "@variance"};

GlobalDesc statsDesc(GlobalDesc d, int shift) {
  d.usesVariance = true;
  d.varianceShift = static_cast<uint32_t>(shift);
  return d;
}

// What a script prints for @count ... @variance (0 for an empty aggregate's error).
struct Extracted {
  int64_t v[6] = {};
  bool operator==(const Extracted &) const = default;
};
std::ostream &operator<<(std::ostream &os, const Extracted &e) {
  for (size_t i = 0; i < 6; ++i)
    os << kExtractorNames[i] << ' ' << e.v[i] << (i < 5 ? " " : "");
  return os;
}

Extracted extractScalar(const sonde_stats *s) {
  Extracted e;
  for (size_t i = 0; i < 6; ++i)
    sonde_stats_extract(s, kExtractors[i], &e.v[i]);
  return e;
}

Extracted extractEntry(const sonde_map *m, int64_t key) {
  Extracted e;
  sonde_key k = L(key);
  for (size_t i = 0; i < 6; ++i)
    sonde_map_stats_extract(m, &k, kExtractors[i], &e.v[i]);
  return e;
}

Extracted expected(int64_t count, int64_t sum, int64_t min, int64_t max, int64_t avg,
                   int64_t variance) {
  return Extracted{{count, sum, min, max, avg, variance}};
}

StatsHeader *statsHeader(sonde_stats *s) {
  return globalData<StatsHeader>(reinterpret_cast<GlobalHeader *>(s));
}

// The kernel's per-CPU blocks after its handlers added `perCpu[c]` on CPU c.
std::vector<KernelStatBlock> kernelAdds(const std::vector<std::vector<int64_t>> &perCpu,
                                        int shift) {
  std::vector<KernelStatBlock> cpus(perCpu.size());
  for (size_t c = 0; c < perCpu.size(); ++c)
    for (int64_t v : perCpu[c])
      sonde_kernel_stat_add(&cpus[c], v, static_cast<uint32_t>(shift), 1);
  return cpus;
}

// A scalar stats global fed by kernel probes, as sonde reads it: the blocks in
// the segment, then the native extractors.
Extracted kernelScalar(const std::vector<std::vector<int64_t>> &perCpu, int shift, uint32_t slots) {
  TestState st =
      makeState({statsDesc(scalar("s", ValueKind::Stats), shift)}, defaultLimits(), slots);
  bpf::scalarFromKernel(statsHeader(st.stats("s")), kernelAdds(perCpu, shift));
  return extractScalar(st.stats("s"));
}

// The same samples through the userspace path: each CPU's into its own slot.
Extracted userScalar(const std::vector<std::vector<int64_t>> &perCpu, int shift) {
  TestState st = makeState({statsDesc(scalar("s", ValueKind::Stats), shift)}, defaultLimits(),
                           static_cast<uint32_t>(perCpu.size()));
  if (perCpu.size() == 1) { // one slot: the public entry point
    for (int64_t v : perCpu[0])
      sonde_stats_add(st.stats("s"), v);
  } else {
    StatsHeader *h = statsHeader(st.stats("s"));
    const StatsHeader &shape = *trustedStats(h);
    for (size_t c = 0; c < perCpu.size(); ++c)
      for (int64_t v : perCpu[c])
        statAdd(*statsSlot(h, shape, static_cast<uint32_t>(c)), shape.shape, v);
  }
  return extractScalar(st.stats("s"));
}

// An array entry fed by kernel probes, as sonde reads it.
Extracted kernelEntry(const std::vector<std::vector<int64_t>> &perCpu, int shift) {
  TestState st = makeState({statsDesc(array("a", {KeyKind::Long}, ValueKind::Stats), shift)},
                           defaultLimits(), 1);
  sonde_map *m = st.map("a");
  MapTable table(globalData<MapHeader>(reinterpret_cast<GlobalHeader *>(m)));
  sonde_key k = L(7);
  uint32_t ref = table.findOrInsert(&k);
  EXPECT_NE(ref, 0u);
  bpf::entryFromKernel(*table.statValue(ref), table.header().valueShape, kernelAdds(perCpu, shift));
  return extractEntry(m, 7);
}

// The same samples added to a userspace array entry, in order.
Extracted userEntry(const std::vector<int64_t> &values, int shift) {
  TestState st = makeState({statsDesc(array("a", {KeyKind::Long}, ValueKind::Stats), shift)},
                           defaultLimits(), 1);
  sonde_key k = L(7);
  for (int64_t v : values)
    EXPECT_EQ(sonde_map_stats_add(st.map("a"), &k, v), SONDE_OK);
  return extractEntry(st.map("a"), 7);
}

std::vector<int64_t> repeated(int64_t v, size_t n) { return std::vector<int64_t>(n, v); }

std::vector<int64_t> concat(const std::vector<std::vector<int64_t>> &parts) {
  std::vector<int64_t> all;
  for (const auto &p : parts)
    all.insert(all.end(), p.begin(), p.end());
  return all;
}

// Samples whose means stay whole numbers, so the integer Welford terms are exact:
// {2, 4, 6} (mean 4, variance 4) and {8, ..., 18} (mean 13, variance 14); together
// mean 10 and variance 240 / 8 = 30.
const std::vector<std::vector<int64_t>> kEvenSplit = {{2, 4, 6}, {8, 10, 12, 14, 16, 18}};

std::vector<std::vector<int64_t>> scaled(const std::vector<std::vector<int64_t>> &parts,
                                         int64_t factor, int64_t offset) {
  auto out = parts;
  for (auto &p : out)
    for (int64_t &v : p)
      v = v * factor + offset;
  return out;
}

TEST(KernelStats, AddIsTheUserspaceAccumulator) {
  // Every field after every sample, wide values included (stap's `int delta`
  // truncates their differences), with and without a variance shift.
  for (int shift : {0, 5, 20}) {
    StatShape shape{};
    shape.usesVariance = 1;
    shape.varianceShift = static_cast<uint32_t>(shift);
    struct {
      StatBlock head;
      int64_t buckets[kMaxBuckets];
    } user{};
    KernelStatBlock kernel{};
    std::mt19937_64 rng(static_cast<uint64_t>(shift) + 11);
    for (int i = 0; i < 4000; ++i) {
      int64_t v = i % 4 == 0   ? static_cast<int64_t>(rng())
                  : i % 4 == 1 ? static_cast<int64_t>(rng() % 2000) - 1000
                  : i % 4 == 2 ? static_cast<int64_t>(rng() % 20'000'000'000ull)
                               : -static_cast<int64_t>(rng() % 5000);
      statAdd(user.head, shape, v);
      sonde_kernel_stat_add(&kernel, v, static_cast<uint32_t>(shift), 1);
      ASSERT_EQ(kernel.count, user.head.count) << i;
      ASSERT_EQ(kernel.sum, user.head.sum) << i;
      ASSERT_EQ(kernel.min, user.head.min) << i;
      ASSERT_EQ(kernel.max, user.head.max) << i;
      ASSERT_EQ(kernel.avg_s, user.head.avgS) << "shift " << shift << " sample " << i;
      ASSERT_EQ(kernel.m2, user.head.m2) << "shift " << shift << " sample " << i;
      ASSERT_EQ(kernel.variance_s, user.head.varianceS) << "shift " << shift << " sample " << i;
    }
  }
}

TEST(KernelStats, OneCpuReadsAsTheUserspacePath) {
  std::mt19937_64 rng(3);
  std::vector<int64_t> wide;
  for (int i = 0; i < 3000; ++i)
    wide.push_back(static_cast<int64_t>(rng() % 40'000'000'000ull) - 20'000'000'000);
  const std::vector<std::pair<const char *, std::vector<int64_t>>> inputs = {
      {"constant", repeated(5000, 1000)},
      {"positive", {1, 2, 4, 260799, 17, 5000, 3}},
      {"negative", {-7, -2, -1000, 4, -260799}},
      {"large", {INT64_MAX, INT64_MIN, 1'000'000'000'000, -1, 0, INT64_MAX}},
      {"wide random", wide},
      {"single sample", {-42}},
  };
  for (const auto &[name, values] : inputs)
    for (int shift : {0, 4}) {
      EXPECT_EQ(kernelScalar({values}, shift, 1), userScalar({values}, shift))
          << name << " shift " << shift;
      EXPECT_EQ(kernelEntry({values}, shift), userEntry(values, shift))
          << name << " shift " << shift;
    }
}

TEST(KernelStats, KnownValues) {
  // The case: 1000 samples of 5000 have no variance, on any CPUs.
  EXPECT_EQ(kernelScalar({repeated(5000, 1000)}, 0, 1),
            expected(1000, 5000000, 5000, 5000, 5000, 0));
  EXPECT_EQ(kernelScalar({repeated(5000, 400), {}, repeated(5000, 600)}, 0, 3),
            expected(1000, 5000000, 5000, 5000, 5000, 0));
  EXPECT_EQ(kernelEntry({repeated(5000, 400), repeated(5000, 600)}, 0),
            expected(1000, 5000000, 5000, 5000, 5000, 0));
  EXPECT_EQ(kernelScalar(kEvenSplit, 0, 2), expected(9, 90, 2, 18, 10, 30));
  EXPECT_EQ(kernelScalar(scaled(kEvenSplit, -1, 0), 0, 2), expected(9, -90, -18, -2, -10, 30));
  EXPECT_EQ(
      kernelScalar(scaled(kEvenSplit, 1, 1'000'000'000'000), 0, 2),
      expected(9, 9'000'000'000'090, 1'000'000'000'002, 1'000'000'000'018, 1'000'000'000'010, 30));
  EXPECT_EQ(kernelScalar({{-42}}, 0, 1), expected(1, -42, -42, -42, -42, 0));
  EXPECT_EQ(kernelEntry(kEvenSplit, 0), expected(9, 90, 2, 18, 10, 30));
  EXPECT_EQ(kernelEntry(scaled(kEvenSplit, -1, 0), 0), expected(9, -90, -18, -2, -10, 30));
}

TEST(KernelStats, PerCpuMergeIsTheUserspaceSlotMerge) {
  // Several CPUs: the kernel's blocks become the slots the userspace merge reads.
  std::mt19937_64 rng(5);
  std::vector<std::vector<int64_t>> random(4);
  for (auto &cpu : random)
    for (uint64_t i = 0, n = rng() % 500; i < n; ++i)
      cpu.push_back(static_cast<int64_t>(rng() % 2'000'000) - 1'000'000);
  for (const auto &split : {kEvenSplit, scaled(kEvenSplit, -3, 7), random})
    for (int shift : {0, 6})
      EXPECT_EQ(kernelScalar(split, shift, static_cast<uint32_t>(split.size())),
                userScalar(split, shift))
          << "shift " << shift;
  // An array entry folds its CPUs as stap aggregates a per-CPU map; where every
  // mean is whole that is the one-block userspace value.
  EXPECT_EQ(kernelEntry(kEvenSplit, 0), userEntry(concat(kEvenSplit), 0));
  Extracted folded = kernelEntry(random, 0), user = userEntry(concat(random), 0);
  for (size_t i = 0; i < 5; ++i) // @count ... @avg: the same whatever the split
    EXPECT_EQ(folded.v[i], user.v[i]) << kExtractorNames[i];
}

TEST(KernelStats, MoreCpusThanSlotsFold) {
  // CPUs 0 and 2 share slot 0: {2,4,6} + {14,16,18} folds to mean 10 and
  // variance (108 + 8 + 108 + 8) / 5 = 46; with slot 1's {8,10,12} (mean 10,
  // variance 4) the merge gives (5 * 46 + 2 * 4) / 8 = 29.
  EXPECT_EQ(kernelScalar({{2, 4, 6}, {8, 10, 12}, {14, 16, 18}, {}}, 0, 2),
            expected(9, 90, 2, 18, 10, 29));
}

TEST(KernelStats, HistogramsSurviveTheSegment) {
  GlobalDesc d = statsDesc(scalar("s", ValueKind::Stats), 0);
  d.hist = HistKind::Log;
  TestState st = makeState({d}, defaultLimits(), 2);
  StatsHeader *h = statsHeader(st.stats("s"));
  const StatShape &shape = trustedStats(h)->shape;
  const std::vector<std::vector<int64_t>> samples = {{1, 2, 3}, {-8, 0, 1000}};
  std::vector<KernelStatBlock> cpus = kernelAdds(samples, 0);
  for (size_t c = 0; c < 2; ++c)
    for (int64_t v : samples[c])
      ++cpus[c].buckets[logHistogramBucket(v)];
  bpf::scalarFromKernel(h, cpus);
  sonde_stat_summary s{};
  ASSERT_EQ(sonde_stats_summary(st.stats("s"), &s), SONDE_OK);
  EXPECT_EQ(s.buckets[logHistogramBucket(1)], 1);
  EXPECT_EQ(s.buckets[logHistogramBucket(2)], 2); // 2 and 3
  EXPECT_EQ(s.buckets[logHistogramBucket(-8)], 1);
  EXPECT_EQ(s.buckets[logHistogramBucket(0)], 1);
  EXPECT_EQ(s.buckets[logHistogramBucket(1000)], 1);
  // And back: each CPU's block as it was, so unchanged state is not rewritten.
  std::vector<KernelStatBlock> back = bpf::scalarToKernel(h, 2);
  ASSERT_EQ(back.size(), 2u);
  for (size_t c = 0; c < 2; ++c) {
    EXPECT_EQ(back[c].count, cpus[c].count);
    EXPECT_EQ(back[c].variance_s, cpus[c].variance_s);
    EXPECT_EQ(back[c].avg_s, cpus[c].avg_s);
    EXPECT_EQ(std::memcmp(back[c].buckets, cpus[c].buckets, 8 * shape.buckets), 0);
  }
}

} // namespace
} // namespace sonde::values::test
