/* A known call chain for the backtrace tests: main -> stack_app_outer (this PIE
 * executable) -> stack_lib_middle -> stack_lib_inner (e2e_stack_lib.c, a shared
 * library), where marker `deep` fires; `shallow` fires in stack_app_outer. Built
 * with and without frame pointers. Usage: e2e_stack COUNT */
#include <sonde/sdt.h>

#include <stdint.h>
#include <stdlib.h>

int64_t stack_lib_middle(int64_t n);

static volatile int64_t sink;

__attribute__((noinline)) static int64_t stack_app_outer(int64_t n) {
  SONDE_PROBE(e2e_stack, shallow, n);
  int64_t r = stack_lib_middle(n);
  sink = r;
  return sink + 1;
}

int main(int argc, char **argv) {
  int64_t count = argc > 1 ? atoll(argv[1]) : 1;
  for (int64_t i = 0; i < count; ++i)
    sink = stack_app_outer(i);
  return 0;
}
