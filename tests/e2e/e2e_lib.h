/* The shared library e2e_args links: its markers live in another ELF object. */
#ifndef SONDE_E2E_LIB_H
#define SONDE_E2E_LIB_H

#include <stdint.h>

/* Fires e2e_lib:lib(n, -n, text). */
void e2e_lib_fire(int64_t n, const char *text);

#endif
