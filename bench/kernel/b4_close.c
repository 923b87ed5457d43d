// B4 workload: close(5000) COUNT times (fd 5000 is never open: the call fails
// fast with EBADF, so the tracepoints dominate). The rate is measured inside,
// after any tracer attached, from wall time (syscall tracepoints cost in the
// kernel, which process CPU time would also count) and written to RESULT as
// "calls_per_second=N".
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: b4_close COUNT RESULT\n");
    return 2;
  }
  long n = strtol(argv[1], NULL, 10);
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  for (long i = 0; i < n; ++i)
    close(5000);
  clock_gettime(CLOCK_MONOTONIC, &b);
  double seconds = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
  FILE *out = fopen(argv[2], "w");
  if (!out)
    return 1;
  fprintf(out, "calls_per_second=%.0f\n", (double)n / seconds);
  return fclose(out) == 0 ? 0 : 1;
}
