/* End-to-end target for skipped probes: a signal handler's marker fires while
 * the same thread is inside a probe handler (which sonde skips and counts).
 * The main thread fires `slow` (a pointer to `release`) once; its handler
 * creates DIR/inside (system("touch ...")) and spins until `release` is set.
 * A helper thread waits for DIR/inside, sends the main thread SIGNALS
 * SIGUSR1s one at a time (each handler fires `signalled`), then sets
 * `release`. DIR/fired gets "signals N" at the end.
 * Usage: e2e_reenter SIGNALS DIR */
#include <pthread.h>
#include <signal.h>
#include <sonde/sdt.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static volatile int release;
static atomic_long handled;
static long signals;
static const char *dir;
static pthread_t mainThread;

static void onSignal(int sig) {
  (void)sig;
  long n = atomic_load(&handled) + 1;
  SONDE_PROBE(e2e, signalled, n);
  atomic_store(&handled, n);
}

static void *sendSignals(void *unused) {
  (void)unused;
  char inside[4096];
  snprintf(inside, sizeof inside, "%s/inside", dir);
  struct timespec pause = {0, 1000000};
  while (access(inside, F_OK) != 0)
    nanosleep(&pause, NULL);
  for (long i = 1; i <= signals; ++i) {
    pthread_kill(mainThread, SIGUSR1);
    while (atomic_load(&handled) < i)
      nanosleep(&pause, NULL);
  }
  release = 1;
  return NULL;
}

int main(int argc, char **argv) {
  if (argc < 3)
    return 2;
  signals = strtol(argv[1], NULL, 10);
  dir = argv[2];
  mainThread = pthread_self();
  struct sigaction sa = {0};
  sa.sa_handler = onSignal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGUSR1, &sa, NULL);
  pthread_t helper;
  if (pthread_create(&helper, NULL, sendSignals, NULL) != 0)
    return 1;
  SONDE_PROBE(e2e, slow, &release);
  pthread_join(helper, NULL);
  char path[4096];
  snprintf(path, sizeof path, "%s/fired", dir);
  FILE *f = fopen(path, "w");
  if (!f)
    return 2;
  fprintf(f, "signals %ld\n", (long)atomic_load(&handled));
  fclose(f);
  return 0;
}
