/* syscall_mix: an exact mix of system calls, sleeps and execs, for the kernel
 * examples (examples/syscalls, sched, lifecycle).
 *
 * Usage: syscall_mix [CLOSES [MISSING [SLEEPERS [SLEEPS [SLEEP_MS [EXECS]]]]]]
 *        (default 20 5 2 4 25 3)
 *
 * The main thread, named "syscall_mix", in this order:
 *   - CLOSES close(-1) calls, each failing with EBADF;
 *   - MISSING open("/nonexistent/sonde-syscall-mix") calls (an openat
 *     system call), each failing with ENOENT;
 *   - EXECS children, one after the other: fork, the child execs /bin/true,
 *     the parent waits for it;
 *   - then waits for the sleepers.
 * Meanwhile SLEEPERS threads, named "mix-sleeper", each sleep SLEEPS times for
 * SLEEP_MS ms with nanosleep (a clock_nanosleep system call each).
 * Prints "closes N missing N sleeps N execs N" at the end. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long closes = 20, missing = 5, sleepers = 2, sleeps = 4, sleepMs = 25, execs = 3;

static void *sleeper(void *arg) {
  (void)arg;
  pthread_setname_np(pthread_self(), "mix-sleeper");
  for (long i = 0; i < sleeps; ++i) {
    struct timespec ts = {sleepMs / 1000, (sleepMs % 1000) * 1000000};
    // A signal would restart the sleep and add a call: none is expected here.
    nanosleep(&ts, NULL);
  }
  return NULL;
}

static long argument(int argc, char **argv, int at, long fallback) {
  return argc > at ? strtol(argv[at], NULL, 10) : fallback;
}

int main(int argc, char **argv) {
  closes = argument(argc, argv, 1, closes);
  missing = argument(argc, argv, 2, missing);
  sleepers = argument(argc, argv, 3, sleepers);
  sleeps = argument(argc, argv, 4, sleeps);
  sleepMs = argument(argc, argv, 5, sleepMs);
  execs = argument(argc, argv, 6, execs);
  if (closes < 0 || missing < 0 || sleepers < 0 || sleepers > 64 || sleeps < 0 || sleepMs < 0 ||
      execs < 0) {
    fprintf(stderr,
            "usage: syscall_mix [CLOSES [MISSING [SLEEPERS [SLEEPS [SLEEP_MS [EXECS]]]]]]\n");
    return 2;
  }

  pthread_t threads[64];
  for (long t = 0; t < sleepers; ++t)
    if (pthread_create(&threads[t], NULL, sleeper, NULL) != 0)
      return 1;

  for (long i = 0; i < closes; ++i)
    close(-1);
  for (long i = 0; i < missing; ++i)
    if (open("/nonexistent/sonde-syscall-mix", O_RDONLY) >= 0)
      return 1;
  for (long i = 0; i < execs; ++i) {
    pid_t child = fork();
    if (child == 0) {
      execl("/bin/true", "true", (char *)NULL);
      _exit(127);
    }
    int status = 0;
    if (child < 0 || waitpid(child, &status, 0) != child || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0)
      return 1;
  }

  for (long t = 0; t < sleepers; ++t)
    pthread_join(threads[t], NULL);
  printf("closes %ld missing %ld sleeps %ld execs %ld\n", closes, missing, sleepers * sleeps,
         execs);
  return 0;
}
