/* bench/attach's target: the main thread spins on the clock and records the
 * longest gap between two of its iterations (the pause an attach imposes on the
 * thread sonde stops); three workers fire a marker continuously. Prints "ready";
 * on SIGUSR1 prints the longest main-thread gap since the previous SIGUSR1 (in
 * microseconds) and starts over; SIGTERM ends it. Usage: attach_target */
#include <pthread.h>
#include <signal.h>
#include <sonde/sdt.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t stopping, reporting;

static void onTerm(int sig) {
  (void)sig;
  stopping = 1;
}

static void onUsr1(int sig) {
  (void)sig;
  reporting = 1;
}

static long long nowNs(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

static void *work(void *arg) {
  long id = (long)arg;
  for (long i = 0; !stopping; ++i) {
    SONDE_PROBE(bench, tick, id, i);
    if ((i & 1023) == 0)
      usleep(50);
  }
  return NULL;
}

int main(void) {
  signal(SIGTERM, onTerm);
  signal(SIGUSR1, onUsr1);
  pthread_t t[3];
  for (long i = 0; i < 3; ++i)
    pthread_create(&t[i], NULL, work, (void *)i);
  printf("ready\n");
  fflush(stdout);
  long long last = nowNs(), longest = 0;
  while (!stopping) {
    long long now = nowNs();
    if (reporting) {
      reporting = 0;
      printf("%lld\n", longest / 1000);
      fflush(stdout);
      longest = 0;
    } else if (now - last > longest) {
      longest = now - last;
    }
    last = now;
  }
  for (int i = 0; i < 3; ++i)
    pthread_join(t[i], NULL);
  return 0;
}
