/* The trace clock: timestamps for records, read in the handler and converted to
 * nanoseconds by the consumer. It is the TSC (rdtsc costs a fraction of
 * clock_gettime's 23 ns here, architecture.md "Performance budget"), calibrated
 * once per session against CLOCK_MONOTONIC and CLOCK_REALTIME. Without an
 * invariant TSC the clock falls back to CLOCK_MONOTONIC readings, and the same
 * conversions then are the identity plus an offset.
 *
 * The calibration is a plain struct without pointers, so it can live in the
 * shared segment and be read by the agent and the consumer alike. */
#ifndef SONDE_RUNTIME_TRANSPORT_TRACE_CLOCK_H
#define SONDE_RUNTIME_TRANSPORT_TRACE_CLOCK_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What a trace clock reading is. */
enum sonde_trace_clock_source {
  SONDE_CLOCK_TSC = 0,       /* rdtsc ticks */
  SONDE_CLOCK_MONOTONIC = 1, /* CLOCK_MONOTONIC nanoseconds (no invariant TSC) */
};

/* Flags of sonde_trace_clock_calibrate(). */
#define SONDE_CLOCK_FORCE_MONOTONIC 1u /* use the fallback even with an invariant TSC */

/* Default calibration interval: long enough that the endpoints' read latency
 * (tens of ns) is a few ppm of it. */
#define SONDE_CLOCK_DEFAULT_INTERVAL_US 5000u

/* Readings convert as the kernel's clocksources do:
 *   ns = ref_ns + ((reading - ref_reading) * mult) >> shift
 * with a 128-bit product, so any 63-bit distance from the reference converts. */
typedef struct sonde_trace_clock {
  uint64_t ref_reading; /* the clock's reading at the reference point */
  int64_t ref_mono_ns;  /* CLOCK_MONOTONIC at the reference point */
  int64_t ref_real_ns;  /* CLOCK_REALTIME at the reference point */
  uint64_t mult;
  uint32_t shift;
  uint32_t source; /* sonde_trace_clock_source */
} sonde_trace_clock;

/* Non-zero when CPUID reports an invariant TSC (constant rate, runs in C-states). */
int sonde_trace_clock_tsc_invariant(void);

/* Measures the TSC against CLOCK_MONOTONIC over `interval_us` (0: the default)
 * and fills *clock; returns the source chosen. Sleeps; call it once, at setup. */
uint32_t sonde_trace_clock_calibrate(sonde_trace_clock *clock, uint32_t interval_us,
                                     uint32_t flags);

/* CLOCK_MONOTONIC in ns: the fallback reading. */
uint64_t sonde_trace_clock_monotonic_reading(void);

/* The clock now: what handlers stamp records with. Not ordered against earlier
 * loads and stores (no fence): each stream only needs its own readings ordered. */
static inline uint64_t sonde_trace_clock_read(const sonde_trace_clock *clock) {
  if (__builtin_expect(clock->source == SONDE_CLOCK_TSC, 1))
    return __builtin_ia32_rdtsc();
  return sonde_trace_clock_monotonic_reading();
}

/* Nanoseconds since the reference point (negative before it). */
static inline int64_t sonde_trace_clock_delta_ns(const sonde_trace_clock *clock, uint64_t reading) {
  __int128 ticks = (int64_t)(reading - clock->ref_reading);
  return (int64_t)((ticks * (__int128)clock->mult) >> clock->shift);
}

/* A reading as CLOCK_MONOTONIC ns. */
static inline int64_t sonde_trace_clock_to_monotonic_ns(const sonde_trace_clock *clock,
                                                        uint64_t reading) {
  return clock->ref_mono_ns + sonde_trace_clock_delta_ns(clock, reading);
}

/* A reading as CLOCK_REALTIME ns: what gettimeofday_ns() returns. */
static inline int64_t sonde_trace_clock_to_realtime_ns(const sonde_trace_clock *clock,
                                                       uint64_t reading) {
  return clock->ref_real_ns + sonde_trace_clock_delta_ns(clock, reading);
}

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SONDE_RUNTIME_TRANSPORT_TRACE_CLOCK_H */
