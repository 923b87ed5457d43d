/* C test target: fires every marker N times (N = argv[1]) and prints a checksum that
 * SdtHeaderTest recomputes, plus whether the `guarded` semaphore was ever seen set. */
#include "MarkerSites.h"

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  long count = argc > 1 ? strtol(argv[1], NULL, 10) : 0;
  long sum = 0;
  for (long i = 0; i < count; ++i)
    sum += fire_markers(i, argv[0]);
  printf("sum=%ld enabled=%d\n", sum, SONDE_PROBE_ENABLED(sonde_test, guarded));
  return 0;
}
