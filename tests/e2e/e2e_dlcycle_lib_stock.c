/* e2e_dlcycle_lib's stock sys/sdt.h marker, in its own file (the stock header
 * and sonde/sdt.h define the same macros). */
#include "e2e_dlcycle_lib.h"

#include <sys/sdt.h>

__attribute__((noinline)) void dlcycle_stock_hit(int64_t n) { STAP_PROBE1(dlcycle_stock, hit, n); }
