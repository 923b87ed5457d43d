/* The library e2e_dlcycle loads and unloads: a sonde/sdt.h marker (patched to a
 * jump) fired 100 times a call, and two stock ones (a trap and the jump path)
 * fired once; the jump one's running sum (n + n) is added, so a wrong
 * relocation shows in the sum the loop checks. */
#include "e2e_dlcycle_lib.h"

#include <sonde/sdt.h>

__attribute__((visibility("default"))) int64_t dlcycle_work(int64_t n) {
  int64_t sum = 0;
  for (int64_t i = 0; i < 100; ++i) {
    SONDE_PROBE(dlcycle, hit, n, i);
    sum += n + i;
  }
  dlcycle_stock_hit(n);
  int64_t before = dlcycle_stock_jump(0);
  return sum + dlcycle_stock_jump(n) - before - n;
}
