/* A marker from stock <sys/sdt.h> (a 1-byte NOP): reached through the trap. */
#include "agent_markers.h"

#include <sys/sdt.h>

__attribute__((noinline)) long agent_fire_stock(long a) {
  long b = 2 * a + 1;
  STAP_PROBE2(agent_stock, hit, a, b);
  return a + b;
}
