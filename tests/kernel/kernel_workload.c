// A known kernel workload for kernel.trace tests, linked statically so that no
// dynamic loader adds system calls of its own:
//   close COUNT BASE SPREAD        close(BASE + i % SPREAD) for i < COUNT
//   oncpus CPU COUNT BASE SPREAD...  per group of four, the closes of `close`
//                                  pinned to CPU (-1: the CPUs it started with)
//   phases COUNT PAUSE_MS FD...    per FD: COUNT closes of it, then a pause
//   sleep COUNT USEC               COUNT sleeps of USEC microseconds
//   exec COUNT NAME                COUNT children exec this program as NAME
//   open PATH                      one open(PATH) (expected to fail)
//   write TEXT                     one write(-1, TEXT, strlen(TEXT)) (fails)
//   calls COUNT NR...              per NR: COUNT calls of system call NR with
//                                  the arguments (-1, 0, 0, -1, 0, 0), which
//                                  the caller picks calls to fail with
//   noop                           nothing
#ifndef _GNU_SOURCE
#define _GNU_SOURCE // sched_setaffinity
#endif
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long number(const char *text) {
  char *end;
  errno = 0;
  long n = strtol(text, &end, 10);
  if (errno || *end || end == text) {
    fprintf(stderr, "kernel_workload: '%s' is not a number\n", text);
    exit(2);
  }
  return n;
}

static void pauseMicros(long us) {
  struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
    ;
}

// Children exec this program through a symlink named NAME, so their comm is NAME.
static int execAs(long count, const char *name) {
  char dir[] = "/tmp/sonde-workload-XXXXXX";
  if (!mkdtemp(dir))
    return 1;
  char link[sizeof dir + 64], self[4096];
  snprintf(link, sizeof link, "%s/%s", dir, name);
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  int rc = 1;
  if (n > 0) {
    self[n] = 0;
    rc = symlink(self, link) == 0 ? 0 : 1;
  }
  for (long i = 0; i < count && rc == 0; ++i) {
    pid_t pid = fork();
    if (pid == 0) {
      execl(link, name, "noop", (char *)NULL);
      _exit(127);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0)
      rc = 1;
  }
  unlink(link);
  rmdir(dir);
  return rc;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: kernel_workload close|phases|sleep|exec|open|write|calls|noop ...\n");
    return 2;
  }
  const char *mode = argv[1];
  if (!strcmp(mode, "close") && argc == 5) {
    long count = number(argv[2]), base = number(argv[3]), spread = number(argv[4]);
    for (long i = 0; i < count; ++i)
      close((int)(base + i % spread));
    return 0;
  }
  if (!strcmp(mode, "oncpus") && argc >= 6 && (argc - 2) % 4 == 0) {
    cpu_set_t started;
    if (sched_getaffinity(0, sizeof started, &started) != 0)
      return 1;
    for (int a = 2; a < argc; a += 4) {
      long cpu = number(argv[a]), count = number(argv[a + 1]), base = number(argv[a + 2]),
           spread = number(argv[a + 3]);
      cpu_set_t set = started;
      if (cpu >= 0) {
        CPU_ZERO(&set);
        CPU_SET((int)cpu, &set);
      }
      if (sched_setaffinity(0, sizeof set, &set) != 0) {
        fprintf(stderr, "kernel_workload: cannot run on CPU %ld: %s\n", cpu, strerror(errno));
        return 1;
      }
      for (long i = 0; i < count; ++i)
        close((int)(base + i % spread));
    }
    return 0;
  }
  if (!strcmp(mode, "phases") && argc >= 5) {
    long count = number(argv[2]), pauseMs = number(argv[3]);
    for (int a = 4; a < argc; ++a) {
      int fd = (int)number(argv[a]);
      for (long i = 0; i < count; ++i)
        close(fd);
      pauseMicros(pauseMs * 1000);
    }
    return 0;
  }
  if (!strcmp(mode, "sleep") && argc == 4) {
    long count = number(argv[2]), us = number(argv[3]);
    for (long i = 0; i < count; ++i)
      pauseMicros(us);
    return 0;
  }
  if (!strcmp(mode, "calls") && argc >= 4) {
    long count = number(argv[2]);
    for (int a = 3; a < argc; ++a) {
      long nr = number(argv[a]);
      for (long i = 0; i < count; ++i)
        syscall(nr, -1L, 0L, 0L, -1L, 0L, 0L);
    }
    return 0;
  }
  if (!strcmp(mode, "exec") && argc == 4)
    return execAs(number(argv[2]), argv[3]);
  if (!strcmp(mode, "write") && argc == 3)
    return write(-1, argv[2], strlen(argv[2])) < 0 ? 0 : 1;
  if (!strcmp(mode, "open") && argc == 3)
    return open(argv[2], O_RDONLY) < 0 ? 0 : 1;
  if (!strcmp(mode, "noop") && argc == 2)
    return 0;
  fprintf(stderr, "kernel_workload: bad arguments for '%s'\n", mode);
  return 2;
}
