/* What the end-to-end targets write about each marker they fire, so the test
 * can derive what a script must print instead of hard-coding numbers. One line
 * per firing:  PROVIDER NAME N V1 ... VN [\tTEXT]
 * where each V is the argument as the 64-bit value `$argN` must have (sign- or
 * zero-extended from its C type) and TEXT is the string an argument points at. */
#ifndef SONDE_E2E_RECORD_H
#define SONDE_E2E_RECORD_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static FILE *e2e_out;

static void e2e_open(const char *path) {
  e2e_out = fopen(path, "w");
  if (!e2e_out) {
    perror(path);
    exit(2);
  }
}

/* The N values are `long long`; `text` may be NULL. */
static void e2e_record(const char *provider, const char *name, const char *text, int count, ...) {
  va_list values;
  va_start(values, count);
  fprintf(e2e_out, "%s %s %d", provider, name, count);
  for (int i = 0; i < count; ++i)
    fprintf(e2e_out, " %lld", va_arg(values, long long));
  va_end(values);
  if (text)
    fprintf(e2e_out, "\t%s", text);
  fputc('\n', e2e_out);
  fflush(e2e_out); /* a crash or an exec must not lose what was fired */
}

#endif
