/* request_server: a request-serving loop with markers, for the examples.
 *
 * Usage: request_server [REQUESTS [THREADS]]   (default 300 requests, 1 thread)
 *
 * Request i (0 <= i < REQUESTS) is served by thread i % THREADS and has
 *   type      i % 3            (0 = "get", 1 = "put", 2 = "scan")
 *   service   1 ms, 2 ms or 4 ms by type, and 20 ms more when i % 50 == 49
 *             (the slow ones: 49, 99, 149, ...)
 *   status    500 when i % 10 == 7, else 200
 *   bytes     100 * (type + 1)
 * Markers (provider `server`):
 *   worker_start(thread)           once per thread
 *   request_start(id, type)        before the work
 *   request_done(id, status)       after it
 *   bytes_sent(id, bytes)          after request_done
 *   worker_done(thread, served)    once per thread, at its end
 * Prints "served N requests" at the end. */
#include <pthread.h>
#include <sonde/sdt.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static long requests = 300;
static long threads = 1;

static void sleepMs(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

static long serviceMs(long id) {
  static const long byType[] = {1, 2, 4};
  return byType[id % 3] + (id % 50 == 49 ? 20 : 0);
}

static void *worker(void *arg) {
  long thread = (long)arg, served = 0;
  SONDE_PROBE(server, worker_start, thread);
  for (long id = thread; id < requests; id += threads) {
    long type = id % 3;
    SONDE_PROBE(server, request_start, id, type);
    sleepMs(serviceMs(id));
    long status = id % 10 == 7 ? 500 : 200;
    SONDE_PROBE(server, request_done, id, status);
    SONDE_PROBE(server, bytes_sent, id, 100 * (type + 1));
    ++served;
  }
  SONDE_PROBE(server, worker_done, thread, served);
  return (void *)served;
}

int main(int argc, char **argv) {
  if (argc > 1)
    requests = strtol(argv[1], NULL, 10);
  if (argc > 2)
    threads = strtol(argv[2], NULL, 10);
  if (requests < 0 || threads < 1 || threads > 64) {
    fprintf(stderr, "usage: %s [REQUESTS [THREADS (1-64)]]\n", argv[0]);
    return 2;
  }
  pthread_t tids[64];
  for (long t = 0; t < threads; ++t)
    pthread_create(&tids[t], NULL, worker, (void *)t);
  long total = 0;
  for (long t = 0; t < threads; ++t) {
    void *served;
    pthread_join(tids[t], &served);
    total += (long)served;
  }
  printf("served %ld requests\n", total);
  return 0;
}
