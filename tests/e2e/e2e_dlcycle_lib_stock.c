/* e2e_dlcycle_lib's stock sys/sdt.h markers, in their own file (the stock
 * header and sonde/sdt.h define the same macros): `hit` traps (nothing follows
 * its NOP in its function), `jump` takes the jump path (a rip-relative add
 * follows it, fixed up for wherever the library is loaded). */
#include "e2e_dlcycle_lib.h"

#include <sys/sdt.h>

__attribute__((noinline)) void dlcycle_stock_hit(int64_t n) {
  STAP_PROBE1(dlcycle_stock, hit, n);
  __asm__ volatile("endbr64");
}

static volatile int64_t jumpSum;

__attribute__((noinline)) int64_t dlcycle_stock_jump(int64_t n) {
  STAP_PROBE1(dlcycle_stock, jump, n);
  jumpSum += n;
  return jumpSum;
}
