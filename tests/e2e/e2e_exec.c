/* End-to-end target reached through wrappers (sh -c, env, a shim script that
 * execs it, a fork that execs it), for -c following exec:
 *   fire N RESULT       fires value(i, 3*i) for i < N, then appends
 *                       "fired=N sum=S" to RESULT (S: the sum of the 3*i)
 *   fork-exec N RESULT  forks; the child execs this program as `fire N RESULT`
 *   spawn N RESULT      runs this program as `fire N RESULT` with posix_spawn
 *   print N             prints "target line I" to standard output and fires
 *                       printed(I), for I < N
 *   environ FILE        writes its environment to FILE, one entry a line */
#include <sonde/sdt.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static int fire(long count, const char *result) {
  long long sum = 0;
  for (long i = 0; i < count; ++i) {
    SONDE_PROBE(e2e_exec, value, i, 3 * i);
    sum += 3 * i;
  }
  FILE *out = fopen(result, "a");
  if (!out) {
    perror(result);
    return 2;
  }
  fprintf(out, "fired=%ld sum=%lld\n", count, sum);
  return fclose(out) == 0 ? 0 : 2;
}

static int fork_exec(const char *count, const char *result) {
  char self[4096];
  ssize_t length = readlink("/proc/self/exe", self, sizeof self - 1);
  if (length < 0)
    return 2;
  self[length] = '\0';
  pid_t child = fork();
  if (child < 0)
    return 2;
  if (child == 0) {
    execl(self, self, "fire", count, result, (char *)NULL);
    perror("execl");
    _exit(127);
  }
  int status = 0;
  waitpid(child, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static int spawn(const char *count, const char *result) {
  char self[4096];
  ssize_t length = readlink("/proc/self/exe", self, sizeof self - 1);
  if (length < 0)
    return 2;
  self[length] = '\0';
  char *argv[] = {self, "fire", (char *)count, (char *)result, NULL};
  pid_t child;
  if (posix_spawn(&child, self, NULL, NULL, argv, environ) != 0)
    return 2;
  int status = 0;
  waitpid(child, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static int print(long count) {
  for (long i = 0; i < count; ++i) {
    printf("target line %ld\n", i);
    fflush(stdout);
    SONDE_PROBE(e2e_exec, printed, i);
  }
  return 0;
}

static int dump_environment(const char *path) {
  FILE *out = fopen(path, "w");
  if (!out) {
    perror(path);
    return 2;
  }
  for (char **e = environ; *e; ++e)
    fprintf(out, "%s\n", *e);
  return fclose(out) == 0 ? 0 : 2;
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "";
  if (strcmp(mode, "fire") == 0 && argc == 4)
    return fire(strtol(argv[2], NULL, 10), argv[3]);
  if (strcmp(mode, "fork-exec") == 0 && argc == 4)
    return fork_exec(argv[2], argv[3]);
  if (strcmp(mode, "spawn") == 0 && argc == 4)
    return spawn(argv[2], argv[3]);
  if (strcmp(mode, "print") == 0 && argc == 3)
    return print(strtol(argv[2], NULL, 10));
  if (strcmp(mode, "environ") == 0 && argc == 3)
    return dump_environment(argv[2]);
  fprintf(stderr, "usage: see the comment at the top of e2e_exec.c\n");
  return 2;
}
