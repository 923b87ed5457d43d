// C++ test target: the shared markers plus one in a function template, whose
// instantiations live in COMDAT groups; same output contract as marker_target.c.
#include "MarkerSites.h"

#include <cstdio>
#include <cstdlib>

template <typename T> __attribute__((noinline)) T templated(T value) {
  SONDE_PROBE(sonde_test, tmpl, value);
  return value + 1;
}

int main(int argc, char **argv) {
  long count = argc > 1 ? std::strtol(argv[1], nullptr, 10) : 0;
  long sum = 0;
  for (long i = 0; i < count; ++i)
    sum += fire_markers(i, argv[0]) + templated<int>(-1) + (long)templated<unsigned long>(0);
  std::printf("sum=%ld enabled=%d\n", sum, SONDE_PROBE_ENABLED(sonde_test, guarded));
  return 0;
}
