/* End-to-end target for concurrent markers: 4 threads each fire `tick`
 * ITERATIONS times (default 1,000,000). Usage: e2e_threads [ITERATIONS]. */
#include <pthread.h>
#include <sonde/sdt.h>
#include <stdio.h>
#include <stdlib.h>

enum { E2E_THREADS = 4 };
static long iterations = 1000000;

static void *fire(void *thread) {
  long id = (long)thread;
  for (long i = 0; i < iterations; ++i)
    SONDE_PROBE(e2e, tick, id, i);
  return NULL;
}

int main(int argc, char **argv) {
  if (argc > 1)
    iterations = strtol(argv[1], NULL, 10);
  pthread_t threads[E2E_THREADS];
  for (long t = 0; t < E2E_THREADS; ++t)
    if (pthread_create(&threads[t], NULL, fire, (void *)t) != 0) {
      perror("pthread_create");
      return 1;
    }
  for (int t = 0; t < E2E_THREADS; ++t)
    pthread_join(threads[t], NULL);
  printf("fired %ld\n", E2E_THREADS * iterations);
  return 0;
}
