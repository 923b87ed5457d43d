/* Library half of the e2e_args target: a marker in a shared object, resolved
 * against the library's own notes and relocated by its load bias. */
#include "e2e_lib.h"

#include <sonde/sdt.h>

__attribute__((visibility("default"))) void e2e_lib_fire(int64_t n, const char *text) {
  SONDE_PROBE(e2e_lib, lib, n, -n, text);
}
