/* Drives e2e_displaced.S's stock sites (DisplacedSitesTest).
 *   e2e_displaced N     calls every function for x = -N/2 .. N/2-1 and prints,
 *                       per function, "NAME calls SUM-OF-X wrong W" (W: results
 *                       that are not the function's value for x).
 *   e2e_displaced N fork  the same in a fork child, then in the parent.
 *   e2e_displaced -t T  T threads call them (all but d_rip_add) in a loop,
 *                       checking each result, until SIGTERM; prints "ready",
 *                       then "thread K: ok" (or WRONG) each; exit 3 if wrong. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

long d_copy(long), d_rip_load(long), d_rip_add(long), d_jcc(long), d_jcc_near(long), d_jmp(long),
    d_ret(long), d_call(long), d_branch_in(long), d_indirect(long);
extern long d_acc;

struct site {
  const char *name;
  long (*fn)(long);
  long (*want)(long);
};

static long plus1(long x) { return x + 1; }
static long plus1000(long x) { return x + 1000; }
static long sign(long x) { return x > 0 ? 1 : -1; }
static long doubledAbove100(long x) { return x > 100 ? 2 * x : x; }
static long plus5(long x) { return x + 5; }
static long plus2(long x) { return x + 2; }
static long plus11(long x) { return x + 11; }
static long plus3(long x) { return x + 3; }
static long plus7(long x) { return x + 7; }

static const struct site sites[] = {
    {"copy", d_copy, plus1},
    {"rip_load", d_rip_load, plus1000},
    {"rip_add", d_rip_add, NULL},
    {"jcc", d_jcc, sign},
    {"jcc_near", d_jcc_near, doubledAbove100},
    {"jmp", d_jmp, plus5},
    {"ret", d_ret, plus2},
    {"call", d_call, plus11},
    {"branch_in", d_branch_in, plus3},
    {"indirect", d_indirect, plus7},
};
enum { kSites = sizeof sites / sizeof sites[0] };

static volatile sig_atomic_t stopping;
static void onStop(int sig) {
  (void)sig;
  stopping = 1;
}

static void *loop(void *arg) {
  long *wrong = arg;
  for (long i = 0; !stopping; ++i) {
    for (int k = 0; k < kSites; ++k)
      if (sites[k].want && sites[k].fn(i) != sites[k].want(i))
        ++*wrong;
    if ((i & 127) == 0)
      usleep(20); /* leaves sonde and other tests their share of the cores */
  }
  return NULL;
}

static int threaded(int threads) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = onStop;
  sigaction(SIGTERM, &sa, NULL);
  pthread_t tids[64];
  long wrong[64] = {0};
  for (int k = 0; k < threads; ++k)
    pthread_create(&tids[k], NULL, loop, &wrong[k]);
  printf("ready\n");
  fflush(stdout);
  int status = 0;
  for (int k = 0; k < threads; ++k) {
    pthread_join(tids[k], NULL);
    if (wrong[k]) {
      printf("thread %d: WRONG %ld\n", k, wrong[k]);
      status = 3;
    } else {
      printf("thread %d: ok\n", k);
    }
  }
  return status;
}

int main(int argc, char **argv) {
  if (argc == 3 && strcmp(argv[1], "-t") == 0) {
    int threads = atoi(argv[2]);
    return threads >= 1 && threads <= 64 ? threaded(threads) : 2;
  }
  long n = argc > 1 ? atol(argv[1]) : 1000;
  if (argc > 2 && strcmp(argv[2], "fork") == 0) {
    fflush(stdout);
    pid_t child = fork();
    if (child < 0)
      return 2;
    if (child > 0) {
      int status = 0;
      if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return 3;
    }
  }
  for (int k = 0; k < kSites; ++k) {
    long sum = 0, wrong = 0, acc = 0;
    d_acc = 0;
    for (long x = -n / 2; x < n - n / 2; ++x) {
      long got = sites[k].fn(x);
      acc += x;
      if (got != (sites[k].want ? sites[k].want(x) : acc))
        ++wrong;
      sum += x;
    }
    printf("%s %ld %ld wrong %ld\n", sites[k].name, n, sum, wrong);
  }
  return 0;
}
