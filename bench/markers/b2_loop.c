/* B2: an xorshift step per iteration with one marker in it, the marker's kind
 * chosen at compile time:
 *   (none)     no marker            -DB2_SONDE  <sonde/sdt.h> SONDE_PROBE
 *   -DB2_SDT   <sys/sdt.h> probe    -DB2_LTTNG  LTTng-UST tracepoint
 * or, for what any tracer pays to timestamp an event, a clock read instead:
 *   -DB2_RDTSC one rdtsc            -DB2_CLOCK  clock_gettime(CLOCK_MONOTONIC)
 * Usage: b2_loop ITERATIONS [RESULT_FILE]. Prints (to RESULT_FILE when given,
 * so a tracer's own output cannot mix in) the final state, which keeps the loop
 * from being optimised away, and the loop's process CPU time per iteration in
 * ns, which includes whatever an attached tool runs inside the process. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#if defined(B2_SONDE)
#include <sonde/sdt.h>
#define B2_MARK(x) SONDE_PROBE(b2, m, x)
#elif defined(B2_SDT)
#include <sys/sdt.h>
#define B2_MARK(x) DTRACE_PROBE1(b2, m, x)
#elif defined(B2_LTTNG)
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "bench_tp.h"
#define B2_MARK(x) lttng_ust_tracepoint(bench, b2_step, x)
#elif defined(B2_RDTSC)
static uint64_t stamps;
#define B2_MARK(x) (stamps += __builtin_ia32_rdtsc())
#elif defined(B2_CLOCK)
static uint64_t stamps;
#define B2_MARK(x)                                                                                 \
  do {                                                                                             \
    struct timespec now;                                                                           \
    clock_gettime(CLOCK_MONOTONIC, &now);                                                          \
    stamps += (uint64_t)now.tv_nsec;                                                               \
  } while (0)
#else
#define B2_MARK(x) ((void)(x))
#endif

static double cpu_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int main(int argc, char **argv) {
  uint64_t iterations = argc > 1 ? strtoull(argv[1], NULL, 10) : 100000000;
  uint64_t x = 88172645463325252ull ^ iterations;
  double start = cpu_ns();
  for (uint64_t i = 0; i < iterations; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    B2_MARK(x);
  }
  double ns = cpu_ns() - start;
  FILE *out = argc > 2 ? fopen(argv[2], "w") : stdout;
  if (!out) {
    perror(argv[2]);
    return 1;
  }
#if defined(B2_RDTSC) || defined(B2_CLOCK)
  x ^= stamps; /* the reads are used */
#endif
  fprintf(out, "state=%" PRIu64 " ns_per_iteration=%.3f\n", x, ns / (double)iterations);
  return fclose(out) == 0 ? 0 : 1;
}
