/* The library e2e_dlcycle loads and unloads: a sonde/sdt.h marker (patched to a
 * jump) fired 100 times a call, and a stock one (a trap) fired once. */
#include "e2e_dlcycle_lib.h"

#include <sonde/sdt.h>

__attribute__((visibility("default"))) int64_t dlcycle_work(int64_t n) {
  int64_t sum = 0;
  for (int64_t i = 0; i < 100; ++i) {
    SONDE_PROBE(dlcycle, hit, n, i);
    sum += n + i;
  }
  dlcycle_stock_hit(n);
  return sum;
}
