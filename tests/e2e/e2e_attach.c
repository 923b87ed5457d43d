/* A running process for `sonde -x`: THREADS threads fire attach:tick(thread, i,
 * i * 7) through a sonde/sdt.h marker (the patched path) and, every 64th
 * iteration, attach_stock:tick(thread, i) through a stock sys/sdt.h marker (the
 * trap path), and check after each marker that their integer and vector values
 * are intact. Prints "ready" once every thread has started; on SIGTERM or SIGINT
 * the threads stop and each prints "thread K: ok" (or "thread K: WRONG ..."), then
 * the process exits 0 (3 if a value was wrong). Usage: e2e_attach THREADS */
#include "e2e_attach.h"

#include <pthread.h>
#include <signal.h>
#include <sonde/sdt.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static volatile sig_atomic_t stopping;
static int started;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

struct worker {
  long id;
  long iterations;
  int wrong;
};

static void onStop(int sig) {
  (void)sig;
  stopping = 1;
}

__attribute__((noinline)) static long tick(long id, long i) {
  long x = i * 7;
  double d = (double)i * 0.5;
  SONDE_PROBE(attach, tick, id, i, x);
  if (x != i * 7 || d != (double)i * 0.5)
    return -1;
  return x;
}

static void *work(void *arg) {
  struct worker *w = arg;
  pthread_mutex_lock(&lock);
  ++started;
  pthread_mutex_unlock(&lock);
  double sum = 0; /* kept in a vector register across the markers */
  long exact = 0, i;
  for (i = 0; !stopping; ++i) {
    if (tick(w->id, i) != i * 7)
      w->wrong = 1;
    if (i % 64 == 0)
      e2e_attach_stock_tick(w->id, i);
    sum += (double)(i & 1023);
    exact += i & 1023;
    if ((i & 511) == 0)
      usleep(20); /* leaves sonde and other tests their share of the cores */
  }
  /* Exact in a double for any count reached here (below 2^53). */
  if (sum != (double)exact)
    w->wrong = 2;
  w->iterations = i;
  return NULL;
}

int main(int argc, char **argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 1;
  if (threads < 1 || threads > 64) {
    fprintf(stderr, "usage: %s THREADS (1-64)\n", argv[0]);
    return 2;
  }
  struct sigaction sa = {0};
  sa.sa_handler = onStop;
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGINT, &sa, NULL);
  pthread_t tids[64];
  struct worker workers[64] = {{0}};
  for (int k = 0; k < threads; ++k) {
    workers[k].id = k;
    pthread_create(&tids[k], NULL, work, &workers[k]);
  }
  for (;;) {
    pthread_mutex_lock(&lock);
    int n = started;
    pthread_mutex_unlock(&lock);
    if (n == threads)
      break;
    usleep(1000);
  }
  printf("ready\n");
  fflush(stdout);
  int status = 0;
  for (int k = 0; k < threads; ++k) {
    pthread_join(tids[k], NULL);
    if (workers[k].wrong) {
      printf("thread %d: WRONG (check %d after %ld iterations)\n", k, workers[k].wrong,
             workers[k].iterations);
      status = 3;
    } else {
      printf("thread %d: ok\n", k);
    }
  }
  return status;
}
