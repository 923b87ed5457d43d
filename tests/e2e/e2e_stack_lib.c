/* Library half of the e2e_stack target: the two innermost frames of a known call
 * chain (e2e_stack.c), with the marker the backtrace tests fire in the inner one. */
#include <sonde/sdt.h>

#include <stdint.h>

/* Opaque to the optimizer, so neither call becomes a jump or is folded away. */
static volatile int64_t sink;

__attribute__((noinline)) static int64_t stack_lib_inner(int64_t n) {
  SONDE_PROBE(e2e_stack, deep, n);
  sink = n;
  return sink + 1;
}

__attribute__((noinline, visibility("default"))) int64_t stack_lib_middle(int64_t n) {
  int64_t r = stack_lib_inner(n + 1);
  sink = r;
  return sink + 1;
}
