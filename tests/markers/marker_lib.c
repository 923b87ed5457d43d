/* Shared-library test target: markers in a .so, called by marker_lib_user.c. */
#include <sonde/sdt.h>
#include <stddef.h>

__attribute__((visibility("default"))) size_t marker_lib_length(const char *text) {
  size_t length = 0;
  while (text[length] != 0)
    ++length;
  SONDE_PROBE(sonde_lib, measured, text, length);
  if (SONDE_PROBE_ENABLED(sonde_lib, guarded))
    SONDE_PROBE(sonde_lib, guarded, (short)length);
  return length;
}
