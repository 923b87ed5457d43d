/* B1's bench_target: T threads, each firing `single_trace` N times with the
 * loop counter as its one int argument (the seed "ust-vs-systemtap-benchmark").
 *   default      <sonde/sdt.h> marker (what Sonde and bpftrace USDT attach to)
 *   -DB1_LTTNG   an LTTng-UST tracepoint with one integer field instead
 *   -DB1_STOCK   a stock <sys/sdt.h> DTRACE_PROBE1 marker (1-byte NOP; B6)
 * Usage: bench_target T N. Prints the events fired. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#if defined(B1_LTTNG)
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "bench_tp.h"
#define B1_MARK(i) lttng_ust_tracepoint(bench, single_trace, i)
#elif defined(B1_STOCK)
#include <sys/sdt.h>
#define B1_MARK(i) DTRACE_PROBE1(bench, single_trace, i)
#else
#include <sonde/sdt.h>
#define B1_MARK(i) SONDE_PROBE(bench, single_trace, i)
#endif

static int events_per_thread;

static void *fire(void *unused) {
  (void)unused;
  for (int i = 0; i < events_per_thread; ++i)
    B1_MARK(i);
  return NULL;
}

int main(int argc, char **argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 1;
  events_per_thread = argc > 2 ? atoi(argv[2]) : 10000000;
  if (threads < 1 || threads > 64 || events_per_thread < 0) {
    fprintf(stderr, "usage: bench_target THREADS EVENTS_PER_THREAD\n");
    return 2;
  }
  pthread_t ids[64];
  for (int t = 0; t < threads; ++t)
    if (pthread_create(&ids[t], NULL, fire, NULL) != 0) {
      perror("pthread_create");
      return 1;
    }
  for (int t = 0; t < threads; ++t)
    pthread_join(ids[t], NULL);
  printf("fired=%lld\n", (long long)threads * events_per_thread);
  return 0;
}
