/* B3's b3_target: T threads, each firing `record` N times as fast as it can
 * (the seed "netlink-vs-relayfs": a writer that only emits records).
 *   default      <sonde/sdt.h> marker `b3:record` (loop counter, thread index);
 *                the Sonde script adds the constant text that makes ~100 bytes
 *   -DB3_LTTNG   an LTTng-UST tracepoint with one 100-byte text array instead
 * Usage: b3_target T N. Prints the records fired and the firing loop's wall
 * time (all threads, first start to last end). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#if defined(B3_LTTNG)
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "b3_tp.h"
#include <string.h>
static char text[100]; /* filled in main: the tracepoint copies 100 bytes */
#define B3_RECORD(i, t)                                                                            \
  do {                                                                                             \
    (void)(i), (void)(t);                                                                          \
    lttng_ust_tracepoint(b3, record, text);                                                        \
  } while (0)
#else
#include <sonde/sdt.h>
#define B3_RECORD(i, t) SONDE_PROBE(b3, record, i, t)
#endif

static long records_per_thread;

static void *fire(void *arg) {
  int thread = (int)(long)arg;
  for (long i = 0; i < records_per_thread; ++i)
    B3_RECORD(i, thread);
  return NULL;
}

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 1;
  records_per_thread = argc > 2 ? atol(argv[2]) : 1000000;
  if (threads < 1 || threads > 64 || records_per_thread < 0) {
    fprintf(stderr, "usage: b3_target THREADS RECORDS_PER_THREAD\n");
    return 2;
  }
#if defined(B3_LTTNG)
  memset(text, 'x', sizeof text);
#endif
  pthread_t ids[64];
  double start = now_seconds();
  for (int t = 0; t < threads; ++t)
    if (pthread_create(&ids[t], NULL, fire, (void *)(long)t) != 0) {
      perror("pthread_create");
      return 1;
    }
  for (int t = 0; t < threads; ++t)
    pthread_join(ids[t], NULL);
  printf("fired=%lld seconds=%.6f\n", (long long)threads * records_per_thread,
         now_seconds() - start);
  return 0;
}
