/* A library agent_target opens with dlopen: its marker is attached when the
 * library appears, and again after a dlclose and a second dlopen. */
#include <sonde/sdt.h>

long agent_plugin_hit(long i) {
  SONDE_PROBE(agent_plugin, hit, i);
  return i + 1;
}
