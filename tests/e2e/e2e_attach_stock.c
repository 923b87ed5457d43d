/* The stock sys/sdt.h marker of e2e_attach (a 1-byte NOP: sonde traps it). */
#include "e2e_attach.h"

#include <sys/sdt.h>

__attribute__((noinline)) void e2e_attach_stock_tick(long id, long i) {
  STAP_PROBE2(attach_stock, tick, id, i);
}
