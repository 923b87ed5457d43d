// Histogram rendering and bucketing. The expected tables were produced by stap's
// own _stp_stat_print_histogram_buf (runtime/stat-common.c, systemtap 4.8)
// compiled against the same bucket counts; stap's BPF runtime cannot print
// histograms, so stap-ref could not be used here.
#include "runtime/format/FormatAbi.h"
#include "runtime/values/StatAccumulator.h"

#include <gtest/gtest.h>

#include <climits>
#include <cstring>
#include <string>
#include <vector>

namespace {

const char *const kLogSquares = R"(value |-------------------------------------------------- count
    0 |@                                                   1
    1 |@                                                   1
    2 |                                                    0
    4 |@                                                   1
    8 |@                                                   1
   16 |@@                                                  2
   32 |@@                                                  2
   64 |@@@@                                                4
  128 |@@@@                                                4
  256 |@@@@@@@                                             7
  512 |@@@@@@@@@                                           9
 1024 |@@@@@@@@@@@@@@                                     14
 2048 |@@@@@@@@@@@@@@@@@@                                 18
 4096 |@@@@@@@@@@@@@@@@@@@@@@@@@@@                        27
 8192 |@@@@@@@@@                                           9
16384 |                                                    0
32768 |                                                    0

)";

const char *const kLinearSquares =
    R"(value |-------------------------------------------------- count
    0 |@@@@@                                              10
  100 |@@                                                  5
  200 |@                                                   3
  300 |@                                                   2
  400 |@                                                   3
  500 |@                                                   2
  600 |@                                                   2
  700 |@                                                   2
  800 |                                                    1
  900 |@                                                   2
 1000 |@                                                   2
>1000 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@                  66

)";

const char *const kLogSparseNegative =
    R"(  value |-------------------------------------------------- count
    -16 |                                                   0
     -8 |                                                   0
     -4 |@                                                  1
     -2 |                                                   0
     -1 |@@                                                 2
      0 |@@@                                                3
      1 |                                                   0
      2 |@@@@                                               4
      4 |                                                   0
      8 |                                                   0
        ~
    128 |                                                   0
    256 |                                                   0
    512 |@@@@@                                              5
   1024 |                                                   0
   2048 |                                                   0
        ~
 131072 |                                                   0
 262144 |                                                   0
 524288 |@@@@@@                                             6
1048576 |                                                   0
2097152 |                                                   0

)";

const char *const kLinearUnderOverflow =
    R"(value |-------------------------------------------------- count
  <10 |@@                                                 2
   10 |@@                                                 2
   20 |@                                                  1
   30 |                                                   0
   40 |@                                                  1
   50 |@@                                                 2
  >50 |@@                                                 2

)";

const char *const kLogScaled = R"(value |-------------------------------------------------- count
    0 |                                                      0
    1 |@@@@@@@@@@@@                                       1234
    2 |                                                     99
    4 |                                                      0
    8 |                                                      0
   16 |                                                      0
   32 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@ 5000
   64 |                                                      0
  128 |                                                      0

)";

const char *const kElision0 = R"(value |-------------------------------------------------- count
      ~
    1 |@@@                                                3
      ~
   64 |@@                                                 2

)";

const char *const kElisionNever = R"(value |-------------------------------------------------- count
    0 |                                                   0
    1 |@@@                                                3
    2 |                                                   0
    4 |                                                   0
    8 |                                                   0
   16 |                                                   0
   32 |                                                   0
   64 |@@                                                 2
  128 |                                                   0
  256 |                                                   0

)";

const char *const kElision1 = R"(value |-------------------------------------------------- count
    0 |                                                   0
    1 |@@@                                                3
    2 |                                                   0
      ~
   32 |                                                   0
   64 |@@                                                 2
  128 |                                                   0

)";

struct Hist {
  std::vector<int64_t> buckets;
  SondeHistogram h{};

  static Hist log() {
    Hist x;
    x.buckets.assign(SONDE_HIST_LOG_BUCKETS, 0);
    x.h.kind = SONDE_HIST_LOG;
    return x;
  }
  static Hist linear(int64_t start, int64_t stop, int64_t interval) {
    Hist x;
    const int32_t n = sonde_hist_linear_bucket_count(start, stop, interval);
    EXPECT_GT(n, 0);
    x.buckets.assign(static_cast<size_t>(n), 0);
    x.h.kind = SONDE_HIST_LINEAR;
    x.h.start = start;
    x.h.interval = interval;
    return x;
  }
  // Where the aggregates (runtime/values) put v.
  void add(int64_t v, int64_t times = 1) {
    sonde::values::StatShape shape{};
    shape.histKind = h.kind == SONDE_HIST_LOG ? SONDE_STAT_HIST_LOG : SONDE_STAT_HIST_LINEAR;
    shape.buckets = static_cast<uint32_t>(buckets.size());
    shape.low = h.start;
    shape.width = h.interval;
    buckets.at(sonde::values::histogramBucket(shape, v)) += times;
  }
  std::string print(int64_t elision = SONDE_HIST_ELISION) {
    h.buckets = buckets.data();
    h.bucket_count = static_cast<uint32_t>(buckets.size());
    std::string out(SONDE_HIST_TEXT_MAX, '\x7e');
    const size_t n = sonde_hist_print(&h, elision, out.data(), out.size());
    return out.substr(0, n);
  }
  std::string sprint(size_t cap, int64_t elision = SONDE_HIST_ELISION) {
    h.buckets = buckets.data();
    h.bucket_count = static_cast<uint32_t>(buckets.size());
    std::string out(cap, '\x7e');
    const size_t n = sonde_hist_sprint(&h, elision, out.data(), cap);
    EXPECT_EQ(out[n], '\0');
    return out.substr(0, n);
  }
};

TEST(FormatHistogram, LogBuckets) {
  using sonde::values::logHistogramBucket;
  EXPECT_EQ(logHistogramBucket(0), 64u);
  EXPECT_EQ(logHistogramBucket(1), 65u);
  EXPECT_EQ(logHistogramBucket(2), 66u);
  EXPECT_EQ(logHistogramBucket(3), 66u);
  EXPECT_EQ(logHistogramBucket(4), 67u);
  EXPECT_EQ(logHistogramBucket(LLONG_MAX), 127u);
  EXPECT_EQ(logHistogramBucket(-1), 63u);
  EXPECT_EQ(logHistogramBucket(-3), 62u);
  EXPECT_EQ(logHistogramBucket(LLONG_MIN), 0u);
  EXPECT_EQ(sonde_hist_log_bucket_value(64), 0);
  EXPECT_EQ(sonde_hist_log_bucket_value(65), 1);
  EXPECT_EQ(sonde_hist_log_bucket_value(127), 1LL << 62);
  EXPECT_EQ(sonde_hist_log_bucket_value(63), -1);
  EXPECT_EQ(sonde_hist_log_bucket_value(62), -2);
  EXPECT_EQ(sonde_hist_log_bucket_value(0), LLONG_MIN);
}

TEST(FormatHistogram, LinearBuckets) {
  EXPECT_EQ(sonde_hist_linear_bucket_count(0, 1000, 100), 13);
  EXPECT_EQ(sonde_hist_linear_bucket_count(0, 1000, 0), 0);
  EXPECT_EQ(sonde_hist_linear_bucket_count(0, 1000, -5), 0);
  EXPECT_EQ(sonde_hist_linear_bucket_count(0, 125, 1), 128);
  EXPECT_EQ(sonde_hist_linear_bucket_count(0, 126, 1), 0); // over STP_MAX_BUCKETS
  sonde::values::StatShape shape{};
  shape.histKind = SONDE_STAT_HIST_LINEAR;
  shape.buckets = 13;
  shape.low = 0;
  shape.width = 100;
  auto bucket = [&](int64_t v) { return sonde::values::histogramBucket(shape, v); };
  EXPECT_EQ(bucket(-1), 0u); // underflow
  EXPECT_EQ(bucket(0), 1u);
  EXPECT_EQ(bucket(99), 1u);
  EXPECT_EQ(bucket(1000), 11u);
  EXPECT_EQ(bucket(1100), 12u); // overflow
  EXPECT_EQ(bucket(LLONG_MAX), 12u);
  EXPECT_EQ(bucket(LLONG_MIN), 0u);
}

TEST(FormatHistogram, SquaresAsLogAndLinear) {
  // global s; probe begin { for (i=0;i<100;i++) s <<< i*i; print(@hist_log(s)) }
  Hist log = Hist::log();
  Hist linear = Hist::linear(0, 1000, 100);
  for (int64_t i = 0; i < 100; ++i) {
    log.add(i * i);
    linear.add(i * i);
  }
  EXPECT_EQ(log.print(), kLogSquares);
  EXPECT_EQ(linear.print(), kLinearSquares);
}

TEST(FormatHistogram, NegativeValuesAndElidedRuns) {
  Hist h = Hist::log();
  const int64_t values[] = {-5, -1, 0, 3, 1000, 1000000};
  for (int64_t i = 0; i < 6; ++i)
    h.add(values[i], i + 1);
  EXPECT_EQ(h.print(), kLogSparseNegative);
}

TEST(FormatHistogram, LinearUnderAndOverflowRows) {
  Hist h = Hist::linear(10, 50, 10);
  for (int64_t v : {-3, 5, 10, 15, 25, 49, 50, 59, 60, 1000})
    h.add(v);
  EXPECT_EQ(h.print(), kLinearUnderOverflow);
}

TEST(FormatHistogram, BarsScaleToFiftyColumns) {
  Hist h = Hist::log();
  h.add(1, 1234);
  h.add(2, 99);
  h.add(32, 5000);
  EXPECT_EQ(h.print(), kLogScaled);
}

TEST(FormatHistogram, ElisionSetting) {
  Hist h = Hist::log();
  h.add(1, 3);
  h.add(64, 2);
  EXPECT_EQ(h.print(0), kElision0);
  EXPECT_EQ(h.print(-1), kElisionNever);
  EXPECT_EQ(h.print(1), kElision1);
}

TEST(FormatHistogram, SprintTruncatesToMaxStringLen) {
  Hist h = Hist::log();
  for (int64_t i = 0; i < 100; ++i)
    h.add(i * i);
  const std::string full = kLogSquares;
  EXPECT_EQ(h.sprint(512), full.substr(0, 511));
  EXPECT_EQ(h.sprint(4096), full);
}

TEST(FormatHistogram, EmptyHistogramPrintsNothing) {
  Hist h = Hist::log();
  EXPECT_EQ(h.print(), "");
  EXPECT_EQ(h.sprint(64), "");
}

TEST(FormatHistogram, WidestTableFitsTheBound) {
  Hist h = Hist::log();
  for (int32_t b = 0; b < SONDE_HIST_LOG_BUCKETS; ++b)
    h.buckets[static_cast<size_t>(b)] = LLONG_MAX - b;
  // A 79-byte header, 128 rows of 20 (value) + 2 + 51 + 19 (count) + 1 bytes, "\n".
  EXPECT_EQ(h.print(-1).size(), 79u + 128u * 93u + 1u);
  EXPECT_LE(h.print(-1).size(), static_cast<size_t>(SONDE_HIST_TEXT_MAX));
}

} // namespace
