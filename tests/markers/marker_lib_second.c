/* A second translation unit of the test library: its `measured` site must share the
 * semaphore defined in marker_lib.c's unit (one per marker per module). */
#include <sonde/sdt.h>
#include <stddef.h>

__attribute__((visibility("default"))) size_t marker_lib_count(const char *text, char wanted) {
  size_t count = 0;
  for (const char *p = text; *p != 0; ++p)
    count += *p == wanted;
  SONDE_PROBE(sonde_lib, measured, text, count);
  return count;
}
