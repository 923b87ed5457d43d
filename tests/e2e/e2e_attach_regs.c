/* A process for `sonde -x` whose threads would notice any state a borrowed
 * thread did not get back: the main thread spins in regs_check_loop (general
 * and vector registers, MXCSR), one thread blocks in read() on a pipe that
 * another fills every 2 ms (firing attach:tick there), one sleeps in
 * nanosleep() in 2 ms steps. A read or sleep that fails or returns early
 * (EINTR, a short sleep) is wrong. Prints "ready"; on SIGTERM prints
 * "regs: ok", "reader: ok", "sleeper: ok" (or WRONG with what) and exits 0
 * (3 if anything was wrong).
 * With HOLD, a thread holds the dynamic loader's lock for HOLD seconds (inside
 * a dl_iterate_phdr callback; "holding", then "released"), then loads and
 * unloads libm every 20 ms, printing "loaded after hold" after the first: a
 * loader left locked by an attach would never get there.
 * Usage: e2e_attach_regs [HOLD] */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <sonde/sdt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

extern int regs_stop;
extern long regs_turns;
long regs_check_loop(void);

static volatile sig_atomic_t stopping;
static int pipeFds[2];
static char readerWrong[128], sleeperWrong[128];

static void onStop(int sig) {
  (void)sig;
  stopping = 1;
  __atomic_store_n(&regs_stop, 1, __ATOMIC_SEQ_CST);
}

static void *writer(void *arg) {
  for (long i = 0; !stopping; ++i) {
    SONDE_PROBE(attach, tick, 0, i, i * 7);
    char c = (char)(i & 127);
    if (write(pipeFds[1], &c, 1) != 1)
      break;
    usleep(2000);
  }
  close(pipeFds[1]);
  return arg;
}

static void *reader(void *arg) {
  for (long i = 0;; ++i) {
    char c;
    ssize_t n = read(pipeFds[0], &c, 1);
    if (n == 0)
      break; /* the writer closed the pipe */
    if (n != 1 || c != (char)(i & 127)) {
      snprintf(readerWrong, sizeof readerWrong, "read %zd (%s) byte %d, expected %d", n,
               n < 0 ? strerror(errno) : "-", n == 1 ? c : -1, (int)(i & 127));
      break;
    }
  }
  return arg;
}

static pthread_mutex_t outputLock = PTHREAD_MUTEX_INITIALIZER;

static void say(const char *line) {
  pthread_mutex_lock(&outputLock);
  printf("%s\n", line);
  fflush(stdout);
  pthread_mutex_unlock(&outputLock);
}

static int holdCallback(struct dl_phdr_info *info, size_t size, void *seconds) {
  (void)info, (void)size;
  sleep(*(unsigned *)seconds);
  return 1; /* once */
}

static void *holder(void *arg) {
  unsigned seconds = *(unsigned *)arg;
  usleep(200000);
  say("holding");
  dl_iterate_phdr(holdCallback, &seconds);
  say("released");
  for (int loaded = 0; !stopping; usleep(20000)) {
    void *lib = dlopen("libm.so.6", RTLD_NOW | RTLD_LOCAL);
    if (lib && !loaded++)
      say("loaded after hold");
    if (lib)
      dlclose(lib);
  }
  return NULL;
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void *sleeper(void *arg) {
  while (!stopping) {
    struct timespec step = {0, 2000000};
    double start = now();
    int rc = nanosleep(&step, NULL);
    double slept = now() - start;
    if (rc != 0 || slept < 0.002) {
      snprintf(sleeperWrong, sizeof sleeperWrong, "nanosleep returned %d (%s) after %.6f s", rc,
               rc ? strerror(errno) : "-", slept);
      break;
    }
  }
  return arg;
}

int main(int argc, char **argv) {
  if (!__builtin_cpu_supports("avx2")) {
    printf("no AVX2\n");
    return 4;
  }
  struct sigaction sa = {0};
  sa.sa_handler = onStop;
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGINT, &sa, NULL);
  if (pipe(pipeFds) != 0)
    return 2;
  pthread_t w, r, s, h;
  unsigned hold = argc > 1 ? (unsigned)atoi(argv[1]) : 0;
  pthread_create(&r, NULL, reader, NULL);
  pthread_create(&w, NULL, writer, NULL);
  pthread_create(&s, NULL, sleeper, NULL);
  if (hold)
    pthread_create(&h, NULL, holder, &hold);
  say("ready");
  long failed = regs_check_loop();
  pthread_join(w, NULL);
  pthread_join(r, NULL);
  pthread_join(s, NULL);
  if (hold)
    pthread_join(h, NULL);
  int status = 0;
  if (failed) {
    printf("regs: WRONG (check %ld after %ld turns)\n", failed, regs_turns);
    status = 3;
  } else {
    printf("regs: ok\n");
  }
  printf("reader: %s%s\n", readerWrong[0] ? "WRONG " : "ok", readerWrong);
  printf("sleeper: %s%s\n", sleeperWrong[0] ? "WRONG " : "ok", sleeperWrong);
  return readerWrong[0] || sleeperWrong[0] ? 3 : status;
}
