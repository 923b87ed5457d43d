/* The markers shared by the C and C++ test targets; SdtHeaderTest.cpp expects exactly
 * these sites, argument sizes and constants. Included once, by the target's main file. */
#ifndef SONDE_TEST_MARKER_SITES_H
#define SONDE_TEST_MARKER_SITES_H

#include <sonde/sdt.h>
#include <stdint.h>

#ifndef __cplusplus
#include <stdbool.h>
#endif

/* A second site of `one`: both sites must share one semaphore. */
static long __attribute__((noinline)) second_site(long value) {
  SONDE_PROBE(sonde_test, one, value);
  return value + 1;
}

/* Every marker fires once per call; not inlined, so each site exists exactly once. The
 * result depends on every argument so the compiler keeps real operands and the caller
 * can check nothing was clobbered. */
static long __attribute__((noinline)) fire_markers(long i, const char *text) {
  signed char sc = (signed char)(-i);
  unsigned char uc = (unsigned char)i;
  short ss = (short)(-i * 3);
  unsigned short us = (unsigned short)(i * 5);
  int si = (int)(-i * 7);
  unsigned ui = (unsigned)(i * 11);
  long long sl = -i * 13;
  unsigned long long ul = (unsigned long long)i * 17;
  char buffer[8] = {'m', 'a', 'r', 'k', 0, 0, 0, 0};
  bool odd = (i & 1) != 0;
  buffer[4] = (char)('0' + i % 10);

  SONDE_PROBE(sonde_test, zero);
  SONDE_PROBE(sonde_test, one, si);
  SONDE_PROBE(sonde_test, two, text, 42);
  SONDE_PROBE(sonde_test, twelve, sc, uc, ss, us, si, ui, sl, ul, text, buffer, (int64_t)-9, odd);
  if (SONDE_PROBE_ENABLED(sonde_test, guarded))
    SONDE_PROBE(sonde_test, guarded, (uint16_t)us);

  return second_site(sc + uc + ss + us + si + (long)ui + (long)sl + (long)ul + buffer[4] + odd);
}

#endif
