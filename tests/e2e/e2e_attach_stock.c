/* The stock sys/sdt.h marker of e2e_attach (a 1-byte NOP that sonde traps: an
 * endbr64, which cannot move, follows it; DisplacedSitesTest runs the jump
 * path under -x). */
#include "e2e_attach.h"

#include <sys/sdt.h>

__attribute__((noinline)) void e2e_attach_stock_tick(long id, long i) {
  STAP_PROBE2(attach_stock, tick, id, i);
  __asm__ volatile("endbr64");
}
