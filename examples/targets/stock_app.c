/* stock_app: a program instrumented with the stock <sys/sdt.h> (as shipped by
 * systemtap-sdt-dev, the markers dtrace, bpftrace and stap know), for the
 * examples. Sonde reaches its 1-byte NOP markers through a trap.
 *
 * Usage: stock_app [ROUNDS]   (default 5)
 *
 * Each round r (0 <= r < ROUNDS) runs three phases, 0, 1, 2; phase p of round r
 * allocates (p + 1) * 1024 bytes r + 1 times, then frees them.
 * Markers (provider `app`):
 *   phase_start(round, phase) / phase_end(round, phase)
 *   alloc(bytes, address) / release(address)
 *   checkpoint(name)                 name is a string: "begin", then "end"
 * Prints "done ROUNDS rounds" at the end. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/sdt.h>

int main(int argc, char **argv) {
  long rounds = argc > 1 ? strtol(argv[1], NULL, 10) : 5;
  if (rounds < 0) {
    fprintf(stderr, "usage: %s [ROUNDS]\n", argv[0]);
    return 2;
  }
  DTRACE_PROBE1(app, checkpoint, "begin");
  for (long r = 0; r < rounds; ++r)
    for (long p = 0; p < 3; ++p) {
      DTRACE_PROBE2(app, phase_start, r, p);
      void *blocks[64];
      long n = r + 1 < 64 ? r + 1 : 64;
      for (long k = 0; k < n; ++k) {
        long bytes = (p + 1) * 1024;
        blocks[k] = malloc((size_t)bytes);
        DTRACE_PROBE2(app, alloc, bytes, blocks[k]);
      }
      for (long k = 0; k < n; ++k) {
        DTRACE_PROBE1(app, release, blocks[k]);
        free(blocks[k]);
      }
      DTRACE_PROBE2(app, phase_end, r, p);
    }
  DTRACE_PROBE1(app, checkpoint, "end");
  printf("done %ld rounds\n", rounds);
  return 0;
}
