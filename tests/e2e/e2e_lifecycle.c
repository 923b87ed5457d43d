/* End-to-end target for the life of an attached process:
 *   detach RESULT        fires `tick` until the tool detaches, then checks that
 *                        the semaphore is back to 0 and its code equals the file
 *   fork RESULT N        parent and child each fire `forked` N times ($arg1 0 / 1),
 *                        after the parent fired it once ($arg1 2)
 *   exec RESULT N        fires `pre_exec` N times, then execs itself as
 *   after-exec RESULT N  which fires `post_exec` N times
 *   exit CODE N          fires `tick` N times, then exits with CODE
 *   crash N              fires `tick` N times, then dies of SIGSEGV
 * RESULT receives one line of facts the test checks. */
#include <fcntl.h>
#include <sonde/sdt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void write_result(const char *path, const char *mode, const char *text) {
  FILE *out = fopen(path, mode);
  if (!out) {
    perror(path);
    exit(2);
  }
  fputs(text, out);
  fclose(out);
}

/* 1 if an executable mapping of our own binary differs from the file's bytes
 * (a marker is patched), 0 if all are equal, -1 if that cannot be checked. */
static int code_differs_from_file(void) {
  char exe[4096];
  ssize_t length = readlink("/proc/self/exe", exe, sizeof exe - 1);
  FILE *maps = fopen("/proc/self/maps", "r");
  int file = open("/proc/self/exe", O_RDONLY);
  if (length < 0 || !maps || file < 0)
    return -1;
  exe[length] = '\0';
  off_t file_size = lseek(file, 0, SEEK_END);
  int differs = 0, checked = 0;
  char line[8192];
  while (!differs && fgets(line, sizeof line, maps)) {
    unsigned long start, end, offset;
    char perms[8], path[4096] = "";
    if (sscanf(line, "%lx-%lx %7s %lx %*s %*s %4095s", &start, &end, perms, &offset, path) < 4 ||
        perms[2] != 'x' || strcmp(path, exe) != 0)
      continue;
    if ((off_t)offset >= file_size)
      continue;
    size_t size = end - start;
    if ((off_t)(offset + size) > file_size)
      size = (size_t)(file_size - (off_t)offset);
    char *bytes = malloc(size);
    if (!bytes || pread(file, bytes, size, (off_t)offset) != (ssize_t)size)
      return -1;
    differs = memcmp(bytes, (const void *)start, size) != 0;
    checked = 1;
    free(bytes);
  }
  fclose(maps);
  close(file);
  return checked ? differs : -1;
}

static int detach(const char *result) {
  double deadline = now_seconds() + 20;
  int attached = 0, patched = -1, detached = 0;
  long fired = 0;
  /* Attached: the semaphore is set (the agent enables markers before main or
   * soon after). */
  while (!attached && now_seconds() < deadline) {
    SONDE_PROBE(e2e, tick, fired++);
    attached = SONDE_PROBE_ENABLED(e2e, tick);
  }
  if (attached)
    patched = code_differs_from_file();
  /* Keep firing until the tool lets go (its script exits after some ticks). */
  while (attached && now_seconds() < deadline) {
    for (int i = 0; i < 1000; ++i)
      SONDE_PROBE(e2e, tick, fired++);
    if (!SONDE_PROBE_ENABLED(e2e, tick) && code_differs_from_file() == 0) {
      detached = 1;
      break;
    }
  }
  /* Markers after the detach run the original NOP. */
  for (int i = 0; i < 100000; ++i)
    SONDE_PROBE(e2e, tick, fired++);
  char text[256];
  snprintf(text, sizeof text, "attached=%d patched=%d detached=%d code_restored=%d\n", attached,
           patched, detached, code_differs_from_file() == 0);
  write_result(result, "w", text);
  return 0;
}

static void fire_forked(long who, long count) {
  for (long i = 0; i < count; ++i)
    SONDE_PROBE(e2e, forked, who, i);
}

static int fork_mode(const char *result, long count) {
  fire_forked(2, 1); /* once before the fork: what the child inherits was the parent's */
  pid_t child = fork();
  if (child < 0)
    return 1;
  if (child == 0) {
    fire_forked(1, count);
    _exit(0);
  }
  fire_forked(0, count);
  int status = 0;
  waitpid(child, &status, 0);
  char text[128];
  snprintf(text, sizeof text, "parent=%ld child=%ld child_status=%d\n", count, count,
           WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
  write_result(result, "w", text);
  return 0;
}

static int exec_mode(const char *self, const char *result, const char *count_text) {
  long count = strtol(count_text, NULL, 10);
  for (long i = 0; i < count; ++i)
    SONDE_PROBE(e2e, pre_exec, i);
  write_result(result, "w", "");
  execl("/proc/self/exe", self, "after-exec", result, count_text, (char *)NULL);
  perror("execl");
  return 1;
}

static int after_exec(const char *result, long count) {
  for (long i = 0; i < count; ++i)
    SONDE_PROBE(e2e, post_exec, i);
  char text[128];
  snprintf(text, sizeof text, "after_exec_fired=%ld traced=%d\n", count,
           SONDE_PROBE_ENABLED(e2e, post_exec));
  write_result(result, "a", text);
  return 0;
}

static void fire_ticks(long count) {
  for (long i = 0; i < count; ++i)
    SONDE_PROBE(e2e, tick, i);
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "";
  if (strcmp(mode, "detach") == 0 && argc == 3)
    return detach(argv[2]);
  if (strcmp(mode, "fork") == 0 && argc == 4)
    return fork_mode(argv[2], strtol(argv[3], NULL, 10));
  if (strcmp(mode, "exec") == 0 && argc == 4)
    return exec_mode(argv[0], argv[2], argv[3]);
  if (strcmp(mode, "after-exec") == 0 && argc == 4)
    return after_exec(argv[2], strtol(argv[3], NULL, 10));
  if (strcmp(mode, "exit") == 0 && argc == 4) {
    fire_ticks(strtol(argv[3], NULL, 10));
    return atoi(argv[2]);
  }
  if (strcmp(mode, "crash") == 0 && argc == 3) {
    fire_ticks(strtol(argv[2], NULL, 10));
    *(volatile int *)0 = 1;
  }
  fprintf(stderr, "usage: see the comment at the top of e2e_lifecycle.c\n");
  return 2;
}
