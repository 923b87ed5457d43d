/* A process for `sonde -x` whose only thread idles in a frame holding stale
 * words that look like returns into malloc (as postgres's postmaster keeps
 * startup's): a stack scan alone would never let the agent load. Fires
 * stale:tick every 10 ms; prints "ready"; exits 0 on SIGTERM. */
#include <signal.h>
#include <sonde/sdt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static volatile sig_atomic_t stopping;

static void onStop(int sig) {
  (void)sig;
  stopping = 1;
}

__attribute__((noinline)) static void idle(void) {
  volatile uintptr_t stale[8];
  for (int i = 0; i < 8; ++i)
    stale[i] = (uintptr_t)&malloc + 16 + (uintptr_t)i;
  printf("ready\n");
  fflush(stdout);
  for (long i = 0; !stopping; ++i) {
    SONDE_PROBE(stale, tick, i);
    usleep(10000);
  }
  (void)stale[0];
}

int main(void) {
  struct sigaction sa = {0};
  sa.sa_handler = onStop;
  sigaction(SIGTERM, &sa, NULL);
  idle();
  return 0;
}
