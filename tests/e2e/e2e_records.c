/* End-to-end target for printf records appended inline by generated code:
 * fires `value` COUNT times with a number from a table of varint edge cases
 * ($arg1) and its own CLOCK_REALTIME reading in ns ($arg2), pausing 2 ms
 * before every 1000th event (a gap no timestamp delta covers), and `note`
 * every 5000th event (text in between). Usage: e2e_records [COUNT]. */
#include <sonde/sdt.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static const int64_t values[] = {0,
                                 1,
                                 -1,
                                 63,
                                 64,
                                 -64,
                                 -65,
                                 127,
                                 128,
                                 8191,
                                 8192,
                                 -8193,
                                 1 << 20,
                                 (int64_t)1 << 35,
                                 INT32_MAX,
                                 INT32_MIN,
                                 INT64_MAX,
                                 INT64_MIN,
                                 -((int64_t)1 << 56),
                                 1234567,
                                 -7654321};

static int64_t realtime_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int main(int argc, char **argv) {
  long count = argc > 1 ? strtol(argv[1], NULL, 10) : 20000;
  const long n = sizeof values / sizeof values[0];
  for (long i = 0; i < count; ++i) {
    if (i % 1000 == 999) {
      struct timespec pause = {0, 2000000};
      nanosleep(&pause, NULL);
    }
    SONDE_PROBE(e2e, value, values[i % n], realtime_ns());
    if (i % 5000 == 0)
      SONDE_PROBE(e2e, note, i);
  }
  printf("fired %ld\n", count);
  return 0;
}
