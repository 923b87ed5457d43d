// The trace clock: calibration against clock_gettime, conversions, fallback.
#include "runtime/transport/TraceClock.h"

#include <gtest/gtest.h>

#include <time.h>

#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

namespace {

int64_t nowNs(clockid_t id) {
  timespec ts;
  clock_gettime(id, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// A reading ordered after everything before it (the test compares it with
// clock_gettime and with other threads' readings, which plain rdtsc may pass).
uint64_t orderedRead(const sonde_trace_clock &clock) {
  __builtin_ia32_lfence();
  return sonde_trace_clock_read(&clock);
}

// How far the clock's conversion is from clock_gettime(id) now: the narrowest
// of several reading pairs around one clock_gettime, so preemption does not count.
int64_t errorNs(const sonde_trace_clock &clock, clockid_t id) {
  int64_t best = INT64_MAX;
  int64_t bestWidth = INT64_MAX;
  for (int i = 0; i < 32; ++i) {
    const uint64_t before = orderedRead(clock);
    const int64_t ns = nowNs(id);
    const uint64_t after = orderedRead(clock);
    const int64_t width =
        sonde_trace_clock_delta_ns(&clock, after) - sonde_trace_clock_delta_ns(&clock, before);
    if (width < bestWidth) {
      bestWidth = width;
      const uint64_t mid = before + (after - before) / 2;
      const int64_t converted = id == CLOCK_REALTIME
                                    ? sonde_trace_clock_to_realtime_ns(&clock, mid)
                                    : sonde_trace_clock_to_monotonic_ns(&clock, mid);
      best = converted - ns;
    }
  }
  return best;
}

// A correctness tolerance, not a speed bound: calibration error over ~100 ms
// plus read jitter.
constexpr int64_t kToleranceNs = 5000;

void sleepMs(int ms) {
  timespec ts{0, ms * 1000000L};
  nanosleep(&ts, nullptr);
}

TEST(TransportClock, ConvertsLikeClockGettimeOver100ms) {
  sonde_trace_clock clock;
  const uint32_t source = sonde_trace_clock_calibrate(&clock, 0, 0);
  EXPECT_EQ(source == SONDE_CLOCK_TSC, sonde_trace_clock_tsc_invariant() != 0);
  for (int step = 0; step <= 4; ++step) {
    EXPECT_LE(std::llabs(errorNs(clock, CLOCK_MONOTONIC)), kToleranceNs) << "after " << step * 25;
    EXPECT_LE(std::llabs(errorNs(clock, CLOCK_REALTIME)), kToleranceNs) << "after " << step * 25;
    sleepMs(25);
  }
}

TEST(TransportClock, MonotonicAcrossThreads) {
  sonde_trace_clock clock;
  sonde_trace_clock_calibrate(&clock, 0, 0);
  std::mutex mutex;
  int64_t last = INT64_MIN;
  int backwards = 0;
  auto run = [&] {
    for (int i = 0; i < 20000; ++i) {
      std::lock_guard<std::mutex> lock(mutex);
      const int64_t ns = sonde_trace_clock_to_monotonic_ns(&clock, orderedRead(clock));
      if (ns < last)
        ++backwards;
      last = ns;
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back(run);
  for (std::thread &t : threads)
    t.join();
  EXPECT_EQ(backwards, 0);
}

TEST(TransportClock, FallbackReadsClockMonotonic) {
  sonde_trace_clock clock;
  ASSERT_EQ(sonde_trace_clock_calibrate(&clock, 0, SONDE_CLOCK_FORCE_MONOTONIC),
            static_cast<uint32_t>(SONDE_CLOCK_MONOTONIC));
  const int64_t before = nowNs(CLOCK_MONOTONIC);
  const uint64_t reading = sonde_trace_clock_read(&clock);
  const int64_t after = nowNs(CLOCK_MONOTONIC);
  const int64_t converted = sonde_trace_clock_to_monotonic_ns(&clock, reading);
  EXPECT_EQ(converted, static_cast<int64_t>(reading));
  EXPECT_LE(before, converted);
  EXPECT_LE(converted, after);
  EXPECT_LE(std::llabs(errorNs(clock, CLOCK_REALTIME)), kToleranceNs);
}

TEST(TransportClock, FixedPointConversion) {
  // 2 GHz: half a nanosecond per tick.
  sonde_trace_clock clock{1000000, 5000, 7000, uint64_t{1} << 31, 32, SONDE_CLOCK_TSC};
  EXPECT_EQ(sonde_trace_clock_to_monotonic_ns(&clock, 1000000), 5000);
  EXPECT_EQ(sonde_trace_clock_to_monotonic_ns(&clock, 1002000), 6000);
  EXPECT_EQ(sonde_trace_clock_to_realtime_ns(&clock, 1002000), 8000);
  EXPECT_EQ(sonde_trace_clock_to_monotonic_ns(&clock, 998000), 4000);
  // Distances far past 2^64 / mult convert without overflow (128-bit product).
  EXPECT_EQ(sonde_trace_clock_delta_ns(&clock, 1000000 + (uint64_t{1} << 62)), int64_t{1} << 61);
}

} // namespace
