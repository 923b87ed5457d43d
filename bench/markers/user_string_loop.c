/* The cost of reading target memory from a marker handler (issue 21): B2's
 * xorshift loop with a <sonde/sdt.h> marker (5-byte site) whose second
 * argument points at a 32-byte string (32 characters and its NUL).
 * Usage: user_string_loop ITERATIONS RESULT_FILE [blocked]. With `blocked` the
 * loop runs with SIGSEGV and SIGBUS blocked, where the agent cannot vouch for a
 * fault and reads with process_vm_readv (the path every read took before).
 * Writes the final state and the loop's process CPU time per iteration in ns. */
#include <inttypes.h>
#include <signal.h>
#include <sonde/sdt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double cpu_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s ITERATIONS RESULT_FILE [blocked]\n", argv[0]);
    return 2;
  }
  uint64_t iterations = strtoull(argv[1], NULL, 10);
  if (argc > 3 && strcmp(argv[3], "blocked") == 0) {
    sigset_t faults;
    sigemptyset(&faults);
    sigaddset(&faults, SIGSEGV);
    sigaddset(&faults, SIGBUS);
    sigprocmask(SIG_BLOCK, &faults, NULL);
  }
  static const char name[] = "function_name_of_32_bytes_here__";
  _Static_assert(sizeof name == 33, "32 characters and the NUL");
  uint64_t x = 88172645463325252ull ^ iterations;
  double start = cpu_ns();
  for (uint64_t i = 0; i < iterations; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    SONDE_PROBE(bench, named, x, name);
  }
  double ns = cpu_ns() - start;
  FILE *out = fopen(argv[2], "w");
  if (!out) {
    perror(argv[2]);
    return 1;
  }
  fprintf(out, "state=%" PRIu64 " ns_per_iteration=%.3f\n", x, ns / (double)iterations);
  return fclose(out) == 0 ? 0 : 1;
}
