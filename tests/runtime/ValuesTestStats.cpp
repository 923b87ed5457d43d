// Stats: extractors, stap's integer variance, histograms, concurrent `<<<`.
#include "ValuesTestSupport.h"

#include "runtime/values/ScalarStats.h"
#include "runtime/values/StatAccumulator.h"

#include <cstring>
#include <random>
#include <sched.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace sonde::values::test {
namespace {

// stap's per-CPU stat_data and the two functions that touch variance, written the way
// stap's C reads (stat-common.c __stp_stat_add, stat.c _stp_stat_get): the literal S1
// loop, `int delta`, 64-bit wrapping (done in unsigned to stay defined here).
struct StapStatData {
  int64_t count = 0, sum = 0, min = 0, max = 0, avg_s = 0, m2 = 0, variance_s = 0;
};

int64_t u2s(uint64_t v) { return static_cast<int64_t>(v); }
uint64_t s2u(int64_t v) { return static_cast<uint64_t>(v); }

int64_t stapDiv(int64_t x, int64_t y) {
  if (y == 0)
    return 0;
  if (y == -1)
    return u2s(0 - s2u(x));
  return x / y;
}

void stapAdd(StapStatData &sd, int shift, int64_t val) {
  if (sd.count == 0) {
    sd.count = 1;
    sd.sum = sd.min = sd.max = val;
    sd.avg_s = u2s(s2u(val) << shift);
    sd.m2 = 0;
    return;
  }
  sd.count++;
  sd.sum = u2s(s2u(sd.sum) + s2u(val));
  if (val > sd.max)
    sd.max = val;
  if (val < sd.min)
    sd.min = val;
  int delta = static_cast<int>(u2s(s2u(u2s(s2u(val) << shift)) - s2u(sd.avg_s)));
  sd.avg_s = u2s(s2u(sd.avg_s) + s2u(stapDiv(delta, sd.count)));
  sd.m2 = u2s(s2u(sd.m2) + s2u(int64_t{delta}) * (s2u(u2s(s2u(val) << shift)) - s2u(sd.avg_s)));
  sd.variance_s = sd.count < 2 ? -1 : stapDiv(sd.m2, sd.count - 1);
}

int64_t stapVariance(const std::vector<StapStatData> &cpus, int shift) {
  int64_t count = 0, sum = 0;
  for (const auto &sd : cpus) {
    count += sd.count;
    sum = u2s(s2u(sum) + s2u(sd.sum));
  }
  int64_t aggAvg = stapDiv(u2s(s2u(sum) << shift), count);
  uint64_t s1 = 0, s2 = 0;
  for (const auto &sd : cpus) {
    if (!sd.count)
      continue;
    uint64_t d = s2u(sd.avg_s) - s2u(aggAvg);
    s1 += s2u(sd.count) * d * d;
    s2 += s2u(sd.count - 1) * s2u(sd.variance_s);
  }
  int64_t varianceS = stapDiv(u2s(s1 + s2), count - 1);
  return varianceS >> ((2 * shift) & 63);
}

GlobalDesc statsGlobal(const char *name, int shift = 0, HistKind hist = HistKind::None,
                       int64_t low = 0, int64_t high = 0, int64_t width = 0) {
  GlobalDesc d = scalar(name, ValueKind::Stats);
  d.usesVariance = true;
  d.varianceShift = static_cast<uint32_t>(shift);
  d.hist = hist;
  d.histLow = low;
  d.histHigh = high;
  d.histWidth = width;
  return d;
}

int64_t extract(const sonde_stats *s, int32_t which, int expectedStatus = SONDE_OK) {
  int64_t v = -12345;
  EXPECT_EQ(sonde_stats_extract(s, which, &v), expectedStatus) << which;
  return v;
}

TEST(ValuesStats, EmptyAggregate) {
  TestState st = makeState({statsGlobal("s")});
  sonde_stats *s = st.stats("s");
  EXPECT_EQ(extract(s, SONDE_STAT_COUNT), 0);
  EXPECT_EQ(extract(s, SONDE_STAT_SUM), 0);
  for (int32_t e : {SONDE_STAT_MIN, SONDE_STAT_MAX, SONDE_STAT_AVG, SONDE_STAT_VARIANCE})
    extract(s, e, SONDE_ERR_EMPTY_AGGREGATE);
  EXPECT_STREQ(sonde_status_text(SONDE_ERR_EMPTY_AGGREGATE), "empty aggregate");
  sonde_stat_summary summary;
  EXPECT_EQ(sonde_stats_summary(s, &summary), SONDE_ERR_EMPTY_AGGREGATE);
}

TEST(ValuesStats, ExtractorsMatchHandComputedValues) {
  // One slot, so every value goes through one Welford sequence.
  TestState st = makeState({statsGlobal("s"), statsGlobal("neg")}, defaultLimits(), 1);
  sonde_stats *s = st.stats("s");
  for (int64_t v : {1, 2, 4})
    sonde_stats_add(s, v);
  EXPECT_EQ(extract(s, SONDE_STAT_COUNT), 3);
  EXPECT_EQ(extract(s, SONDE_STAT_SUM), 7);
  EXPECT_EQ(extract(s, SONDE_STAT_MIN), 1);
  EXPECT_EQ(extract(s, SONDE_STAT_MAX), 4);
  EXPECT_EQ(extract(s, SONDE_STAT_AVG), 2);
  // Welford in integers: avg_s 1, 1, 2; M2 0, 1, 7; variance_s 7/2 = 3 (true: 2.33).
  EXPECT_EQ(extract(s, SONDE_STAT_VARIANCE), 3);
  sonde_stats *n = st.stats("neg");
  for (int64_t v : {-7, -2})
    sonde_stats_add(n, v);
  EXPECT_EQ(extract(n, SONDE_STAT_AVG), -4); // C division truncates toward zero
  EXPECT_EQ(extract(n, SONDE_STAT_MIN), -7);
  sonde_stats_clear(s);
  EXPECT_EQ(extract(s, SONDE_STAT_COUNT), 0);
  extract(s, SONDE_STAT_MIN, SONDE_ERR_EMPTY_AGGREGATE);
  sonde_stats_add(s, 10);
  EXPECT_EQ(extract(s, SONDE_STAT_VARIANCE), 0);
  EXPECT_EQ(extract(s, SONDE_STAT_MIN), 10);
}

TEST(ValuesStats, VarianceIsStapsOnOneSlot) {
  for (int shift : {0, 3, 10}) {
    TestState st = makeState({statsGlobal("s", shift)}, defaultLimits(), 1);
    std::mt19937_64 rng(static_cast<uint64_t>(shift) + 1);
    StapStatData ref;
    for (int i = 0; i < 5000; ++i) {
      // Wide values make `int delta` truncate, which stap's numbers depend on.
      int64_t v = static_cast<int64_t>(rng() % 20'000'000'000ull) - 10'000'000'000;
      if (i % 3 == 0)
        v = static_cast<int64_t>(rng() % 1000);
      stapAdd(ref, shift, v);
      sonde_stats_add(st.stats("s"), v);
      if (i % 997 == 0)
        ASSERT_EQ(extract(st.stats("s"), SONDE_STAT_VARIANCE), stapVariance({ref}, shift));
    }
    EXPECT_EQ(extract(st.stats("s"), SONDE_STAT_VARIANCE), stapVariance({ref}, shift));
  }
}

TEST(ValuesStats, VarianceMergeOverManySlotsIsStaps) {
  StatShape shape{};
  shape.usesVariance = 1;
  shape.varianceShift = 2;
  constexpr int kSlots = 7;
  std::vector<std::vector<int64_t>> storage(kSlots, std::vector<int64_t>(8, 0));
  std::vector<StapStatData> ref(kSlots);
  std::mt19937_64 rng(99);
  for (int i = 0; i < 20000; ++i) {
    int slot = static_cast<int>(rng() % (kSlots - 1)); // the last slot stays empty
    int64_t v = static_cast<int64_t>(rng() % 100000) - 30000;
    statAdd(*reinterpret_cast<StatBlock *>(storage[slot].data()), shape, v);
    stapAdd(ref[slot], 2, v);
  }
  SlotMerge merge(shape, false);
  for (auto &block : storage)
    merge.add(*reinterpret_cast<StatBlock *>(block.data()));
  sonde_stat_summary s;
  merge.finish(s);
  EXPECT_EQ(s.variance, stapVariance(ref, 2));
  EXPECT_EQ(s.count, 20000);
}

TEST(ValuesStats, PerCpuSlotsMergeLikeStapsPerCpuData) {
  cpu_set_t original;
  ASSERT_EQ(sched_getaffinity(0, sizeof(original), &original), 0);
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE && cpus.size() < 2; ++c)
    if (CPU_ISSET(c, &original))
      cpus.push_back(c);
  if (cpus.size() < 2)
    GTEST_SKIP() << "needs two CPUs";
  TestState st = makeState({statsGlobal("s")}, defaultLimits(), hostCpuSlots());
  std::vector<StapStatData> ref(hostCpuSlots());
  std::mt19937_64 rng(5);
  for (int round = 0; round < 6; ++round) {
    int cpu = cpus[round % 2];
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    ASSERT_EQ(sched_setaffinity(0, sizeof(one), &one), 0);
    sched_yield();
    for (int i = 0; i < 300; ++i) {
      int64_t v = static_cast<int64_t>(rng() % 5000);
      sonde_stats_add(st.stats("s"), v);
      stapAdd(ref[static_cast<size_t>(cpu) % ref.size()], 0, v);
    }
  }
  sched_setaffinity(0, sizeof(original), &original);
  EXPECT_EQ(extract(st.stats("s"), SONDE_STAT_VARIANCE), stapVariance(ref, 0));
}

TEST(ValuesStats, LogHistogramBuckets) {
  TestState st = makeState({statsGlobal("s", 0, HistKind::Log)});
  sonde_stats *s = st.stats("s");
  struct Case {
    int64_t value;
    int64_t bucket;
  } cases[] = {{0, 64},  {1, 65},  {2, 66},        {3, 66},          {4, 67},
               {-1, 63}, {-5, 61}, {INT64_MIN, 0}, {INT64_MAX, 127}, {1 << 20, 85}};
  for (const Case &c : cases)
    sonde_stats_add(s, c.value);
  sonde_stat_summary summary;
  ASSERT_EQ(sonde_stats_summary(s, &summary), SONDE_OK);
  std::vector<int64_t> expected(128, 0);
  for (const Case &c : cases)
    ++expected[static_cast<size_t>(c.bucket)];
  for (int64_t b = 0; b < 128; ++b) {
    int64_t count = -1;
    ASSERT_EQ(sonde_stats_bucket(s, b, &count), SONDE_OK);
    EXPECT_EQ(count, expected[static_cast<size_t>(b)]) << "bucket " << b;
  }
  EXPECT_EQ(sonde_hist_bucket_value(&summary, 64), 0);
  EXPECT_EQ(sonde_hist_bucket_value(&summary, 67), 4);
  EXPECT_EQ(sonde_hist_bucket_value(&summary, 63), -1);
  EXPECT_EQ(sonde_hist_bucket_value(&summary, 61), -4);
  EXPECT_EQ(sonde_hist_bucket_value(&summary, 0), INT64_MIN);
  int64_t out = 0;
  EXPECT_EQ(sonde_stats_bucket(s, 128, &out), SONDE_ERR_HIST_INDEX);
  EXPECT_EQ(sonde_stats_bucket(s, -1, &out), SONDE_ERR_HIST_INDEX);
  EXPECT_STREQ(sonde_status_text(SONDE_ERR_HIST_INDEX), "histogram index out of range");
}

TEST(ValuesStats, LinearHistogramBuckets) {
  TestState st = makeState({statsGlobal("s", 0, HistKind::Linear, 0, 100, 10)});
  sonde_stats *s = st.stats("s");
  int64_t out = 0;
  EXPECT_EQ(sonde_stats_bucket(s, 1, &out), SONDE_ERR_EMPTY_AGGREGATE);
  // 13 buckets: <0, [0,10) ... [100,110), then >= 110.
  struct Case {
    int64_t value;
    int64_t bucket;
  } cases[] = {{-1, 0},   {INT64_MIN, 0}, {0, 1},    {9, 1},     {10, 2},        {99, 10},
               {100, 11}, {109, 11},      {110, 12}, {1000, 12}, {INT64_MAX, 12}};
  for (const Case &c : cases)
    sonde_stats_add(s, c.value);
  std::vector<int64_t> expected(13, 0);
  for (const Case &c : cases)
    ++expected[static_cast<size_t>(c.bucket)];
  for (int64_t b = 0; b < 13; ++b) {
    ASSERT_EQ(sonde_stats_bucket(s, b, &out), SONDE_OK);
    EXPECT_EQ(out, expected[static_cast<size_t>(b)]) << "bucket " << b;
  }
  EXPECT_EQ(sonde_stats_bucket(s, 13, &out), SONDE_ERR_HIST_INDEX);
  sonde_stat_summary summary;
  ASSERT_EQ(sonde_stats_summary(s, &summary), SONDE_OK);
  EXPECT_EQ(summary.bucket_count, 13u);
  EXPECT_EQ(sonde_hist_bucket_value(&summary, 0), 0);    // "<0"
  EXPECT_EQ(sonde_hist_bucket_value(&summary, 3), 20);   // [20, 30)
  EXPECT_EQ(sonde_hist_bucket_value(&summary, 12), 100); // ">100", stap's label
}

TEST(ValuesStats, FourThreadsAMillionEachCountExactly) {
  TestState st = makeState({statsGlobal("s", 0, HistKind::Log)});
  sonde_stats *s = st.stats("s");
  constexpr int64_t kPerThread = 1'000'000;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([s, t] {
      for (int64_t i = 0; i < kPerThread; ++i)
        sonde_stats_add(s, i + t);
    });
  for (auto &t : threads)
    t.join();
  EXPECT_EQ(extract(s, SONDE_STAT_COUNT), 4 * kPerThread);
  int64_t expectedSum = 0;
  for (int t = 0; t < 4; ++t)
    expectedSum += kPerThread * (kPerThread - 1) / 2 + int64_t{t} * kPerThread;
  EXPECT_EQ(extract(s, SONDE_STAT_SUM), expectedSum);
  EXPECT_EQ(extract(s, SONDE_STAT_MIN), 0);
  EXPECT_EQ(extract(s, SONDE_STAT_MAX), kPerThread + 2);
  sonde_stat_summary summary;
  ASSERT_EQ(sonde_stats_summary(s, &summary), SONDE_OK);
  int64_t inBuckets = 0;
  for (uint32_t b = 0; b < summary.bucket_count; ++b)
    inBuckets += summary.buckets[b];
  EXPECT_EQ(inBuckets, 4 * kPerThread);
}

TEST(ValuesStats, SlotsOfDeadTargetsAreTakenOver) {
  TestState st = makeState({statsGlobal("s")}, defaultLimits(), 2);
  auto *h = globalData<StatsHeader>(reinterpret_cast<GlobalHeader *>(st.stats("s")));
  pid_t dead = fork();
  if (dead == 0)
    _exit(0);
  waitpid(dead, nullptr, 0);
  // As if two targets died inside `<<<`, holding both slots.
  statsSlot(h, 0)->slotLock.store(static_cast<uint32_t>(dead));
  statsSlot(h, 1)->slotLock.store(static_cast<uint32_t>(dead));
  sonde_stats_add(st.stats("s"), 5);
  EXPECT_EQ(extract(st.stats("s"), SONDE_STAT_COUNT), 1);
  EXPECT_EQ(statsSlot(h, 0)->slotLock.load(), 0u);
  EXPECT_EQ(statsSlot(h, 1)->slotLock.load(), 0u);
  EXPECT_EQ(statsSlot(h, 2)->count, 0) << "the overflow block was not needed";

  // A killed target nobody has reaped yet is a zombie: just as dead.
  pid_t zombie = fork();
  if (zombie == 0)
    _exit(0);
  siginfo_t info;
  ASSERT_EQ(waitid(P_PID, static_cast<id_t>(zombie), &info, WEXITED | WNOWAIT), 0);
  statsSlot(h, 0)->slotLock.store(static_cast<uint32_t>(zombie));
  statsSlot(h, 1)->slotLock.store(static_cast<uint32_t>(zombie));
  sonde_stats_add(st.stats("s"), 6);
  EXPECT_EQ(extract(st.stats("s"), SONDE_STAT_SUM), 11);
  EXPECT_EQ(statsSlot(h, 0)->slotLock.load() + statsSlot(h, 1)->slotLock.load(), 0u);
  EXPECT_EQ(statsSlot(h, 2)->count, 0);
  waitpid(zombie, nullptr, 0);
}

TEST(ValuesStats, SlotsHeldByLiveOwnersAreNeitherStolenNorWaitedOnForever) {
  TestState st = makeState({statsGlobal("s", 0, HistKind::Log)}, defaultLimits(), 2);
  auto *h = globalData<StatsHeader>(reinterpret_cast<GlobalHeader *>(st.stats("s")));
  auto live = static_cast<uint32_t>(getppid()); // alive, and not us
  statsSlot(h, 0)->slotLock.store(live);
  statsSlot(h, 1)->slotLock.store(live);
  for (int64_t v : {7, -3, 12})
    sonde_stats_add(st.stats("s"), v);
  EXPECT_EQ(statsSlot(h, 0)->slotLock.load(), live);
  EXPECT_EQ(statsSlot(h, 1)->slotLock.load(), live);
  sonde_stat_summary summary;
  ASSERT_EQ(sonde_stats_summary(st.stats("s"), &summary), SONDE_OK);
  EXPECT_EQ(summary.count, 3);
  EXPECT_EQ(summary.sum, 16);
  EXPECT_EQ(summary.min, -3);
  EXPECT_EQ(summary.max, 12);
  EXPECT_EQ(summary.buckets[67] + summary.buckets[68] + summary.buckets[62], 3);
  sonde_stats_clear(st.stats("s"));
  EXPECT_EQ(extract(st.stats("s"), SONDE_STAT_COUNT), 0);
  statsSlot(h, 0)->slotLock.store(0);
  statsSlot(h, 1)->slotLock.store(0);
  sonde_stats_add(st.stats("s"), 1);
  EXPECT_EQ(extract(st.stats("s"), SONDE_STAT_MAX), 1);
}

} // namespace
} // namespace sonde::values::test
