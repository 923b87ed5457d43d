// Calibration of the trace clock (TraceClock.h).
#include "runtime/transport/TraceClock.h"

#include <cpuid.h>
#include <time.h>

#include <cstdint>

namespace {

// 2^32 ns per reading unit as a fixed-point 1.0; 32 fraction bits keep the
// conversion error under 1 ns per second of distance for any TSC rate.
constexpr uint32_t kShift = 32;
// Read pairs per endpoint; the narrowest one wins (preemption and cache misses
// only widen a pair).
constexpr int kTries = 64;

int64_t nowNs(clockid_t id) {
  timespec ts;
  clock_gettime(id, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// lfence keeps rdtsc from running ahead of the clock_gettime it brackets.
uint64_t orderedTsc() {
  __builtin_ia32_lfence();
  return __builtin_ia32_rdtsc();
}

struct Pair {
  uint64_t reading; // the midpoint of the rdtsc pair around the clock read
  int64_t ns;
};

Pair sampleTscAgainstMonotonic() {
  Pair best{};
  uint64_t bestWidth = UINT64_MAX;
  for (int i = 0; i < kTries; ++i) {
    uint64_t before = orderedTsc();
    int64_t ns = nowNs(CLOCK_MONOTONIC);
    uint64_t after = orderedTsc();
    if (after - before < bestWidth) {
      bestWidth = after - before;
      best = {before + (after - before) / 2, ns};
    }
  }
  return best;
}

// CLOCK_REALTIME - CLOCK_MONOTONIC, from the narrowest monotonic pair around a
// realtime read.
int64_t realtimeOffset() {
  int64_t best = 0;
  int64_t bestWidth = INT64_MAX;
  for (int i = 0; i < kTries; ++i) {
    int64_t before = nowNs(CLOCK_MONOTONIC);
    int64_t real = nowNs(CLOCK_REALTIME);
    int64_t after = nowNs(CLOCK_MONOTONIC);
    if (after - before < bestWidth) {
      bestWidth = after - before;
      best = real - (before + (after - before) / 2);
    }
  }
  return best;
}

void sleepUs(uint32_t us) {
  timespec ts{static_cast<time_t>(us / 1000000), static_cast<long>(us % 1000000) * 1000};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

void calibrateMonotonic(sonde_trace_clock *clock) {
  clock->source = SONDE_CLOCK_MONOTONIC;
  clock->shift = kShift;
  clock->mult = uint64_t{1} << kShift;
  clock->ref_reading = sonde_trace_clock_monotonic_reading();
  clock->ref_mono_ns = static_cast<int64_t>(clock->ref_reading);
  clock->ref_real_ns = clock->ref_mono_ns + realtimeOffset();
}

void calibrateTsc(sonde_trace_clock *clock, uint32_t intervalUs) {
  Pair start = sampleTscAgainstMonotonic();
  sleepUs(intervalUs);
  Pair end = sampleTscAgainstMonotonic();
  const unsigned __int128 ns = static_cast<uint64_t>(end.ns - start.ns);
  const uint64_t ticks = end.reading - start.reading;
  if (ticks == 0 || end.ns <= start.ns) { // a TSC that did not move is no clock
    calibrateMonotonic(clock);
    return;
  }
  clock->source = SONDE_CLOCK_TSC;
  clock->shift = kShift;
  clock->mult = static_cast<uint64_t>(((ns << kShift) + ticks / 2) / ticks);
  clock->ref_reading = end.reading;
  clock->ref_mono_ns = end.ns;
  clock->ref_real_ns = end.ns + realtimeOffset();
}

} // namespace

extern "C" {

int sonde_trace_clock_tsc_invariant(void) {
  unsigned eax, ebx, ecx, edx;
  if (__get_cpuid(0x80000000u, &eax, &ebx, &ecx, &edx) == 0 || eax < 0x80000007u)
    return 0;
  __get_cpuid(0x80000007u, &eax, &ebx, &ecx, &edx);
  return (edx >> 8) & 1; // "Invariant TSC" (Intel SDM, AMD APM: CPUID Fn8000_0007 EDX[8])
}

uint64_t sonde_trace_clock_monotonic_reading(void) {
  return static_cast<uint64_t>(nowNs(CLOCK_MONOTONIC));
}

uint32_t sonde_trace_clock_calibrate(sonde_trace_clock *clock, uint32_t interval_us,
                                     uint32_t flags) {
  if ((flags & SONDE_CLOCK_FORCE_MONOTONIC) != 0 || !sonde_trace_clock_tsc_invariant()) {
    calibrateMonotonic(clock);
  } else {
    calibrateTsc(clock, interval_us != 0 ? interval_us : SONDE_CLOCK_DEFAULT_INTERVAL_US);
  }
  return clock->source;
}

} // extern "C"
