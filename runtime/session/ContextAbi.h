/* The per-invocation state a generated handler receives, and the calls through
 * which it raises errors and produces output.
 *
 * Error model (no exceptions, no longjmp, so the same code can target BPF):
 * a failing operation calls sonde_raise*() which sets ctx->error; generated code
 * tests ctx->error after every call that can fail and branches to the innermost
 * `catch` block (if ctx->uncatchable is 0) or returns. The runtime that invoked
 * the handler reports what is left in ctx->error when it returns:
 *   ERROR: division by 0 near operator '/' at app.probe:9:22 in probe timer.s(1)
 */
#ifndef SONDE_RUNTIME_SESSION_CONTEXT_ABI_H
#define SONDE_RUNTIME_SESSION_CONTEXT_ABI_H

#include "runtime/format/FormatAbi.h"
#include "runtime/values/ValueAbi.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Errors a handler raises, beyond the value statuses of ValueAbi.h (which
 * sonde_raise() also accepts). */
enum sonde_error_code {
  SONDE_ERROR_DIVISION_BY_ZERO = 100,    /* "division by 0" */
  SONDE_ERROR_MAXACTION = 101,           /* "MAXACTION exceeded" (uncatchable) */
  SONDE_ERROR_MAXNESTING = 102,          /* "MAXNESTING exceeded" */
  SONDE_ERROR_FUNCTIONS_EXHAUSTED = 103, /* "all functions exhausted" */
  SONDE_ERROR_STRING_POSITION = 104,     /* "Position out of bounds" (stringat) */
  SONDE_ERROR_RANDINT_RANGE = 105,       /* "range too wide" (randint) */
  SONDE_ERROR_ABORT = 106,               /* abort(): ends the session, uncatchable */
};

/* ctx->error after abort(): the handler ends at once, nothing is reported and
 * the session stops (end probes still run). Any other non-zero value is a
 * runtime error. */
#define SONDE_CONTEXT_ABORTED 2

/* A location index meaning "no token": the error line has no "near" part. */
#define SONDE_NO_LOCATION 0xffffffffu

/* Fields generated code reads and writes directly come first; their offsets are
 * part of the ABI. */
typedef struct sonde_context {
  sonde_segment *segment;  /* this process's mapping of the script state */
  int32_t error;           /* non-zero while a runtime error propagates */
  int32_t uncatchable;     /* the propagating error ignores try/catch */
  int64_t actions_left;    /* MAXACTION budget: decremented per statement */
  int32_t nesting;         /* current user-function depth (MAXNESTING) */
  uint32_t probe_index;    /* the running probe (sonde_module_desc::probes) */
  uint32_t error_location; /* sonde_location index of the failing token */
  uint32_t reserved;
  char *error_message;    /* MAXSTRINGLEN bytes: the propagating error's text */
  const void *probe_data; /* probe-kind data, e.g. a marker's saved registers */
  void *runtime;          /* the loaded module's runtime state (opaque) */
  void *thread;           /* per-thread scratch: tokenize, regex captures (opaque) */
  /* A relay transport's cursor (RecordCursor.h), which printf appends numeric
   * records to inline, or null. */
  struct sonde_record_cursor *record_cursor;
} sonde_context;

/* ---- errors ---- */

/* Raises status (sonde_status or sonde_error_code) at location `loc`. */
void sonde_raise(sonde_context *ctx, int32_t status, uint32_t loc);
/* Raises a runtime error with the given text (error(), user functions). */
void sonde_raise_message(sonde_context *ctx, const char *message, uint32_t loc);
/* Raises the overflow error of map m (its exact MAXMAPENTRIES / size message). */
void sonde_raise_map_full(sonde_context *ctx, const sonde_map *m, uint32_t loc);
/* catch (msg): copies the propagating message into out (MAXSTRINGLEN) and clears it. */
void sonde_error_take(sonde_context *ctx, char *out);

/* ---- output (the transport decides where it goes) ---- */

/* printf(format #fmt, args...). */
void sonde_out_printf(sonde_context *ctx, uint32_t fmt, const SondeFormatArg *args, uint32_t loc);
/* sprintf into out (MAXSTRINGLEN). */
void sonde_out_sprintf(sonde_context *ctx, uint32_t fmt, const SondeFormatArg *args, char *out,
                       uint32_t loc);
/* print/println/printd/printdln: delimiter NULL for none. */
void sonde_out_print(sonde_context *ctx, const SondeValue *values, uint32_t count,
                     const char *delimiter, int32_t newline);
/* print_char(c). */
void sonde_out_char(sonde_context *ctx, int64_t c);
/* print(@hist_*(s)) of scalar stats / of a[k]; raises "empty aggregate". */
void sonde_out_hist_stats(sonde_context *ctx, const sonde_stats *s, uint32_t loc);
void sonde_out_hist_map(sonde_context *ctx, const sonde_map *m, const sonde_key *keys,
                        uint32_t loc);
/* sprint(@hist_*(...)) into out (MAXSTRINGLEN). */
void sonde_out_shist_stats(sonde_context *ctx, const sonde_stats *s, char *out, uint32_t loc);
void sonde_out_shist_map(sonde_context *ctx, const sonde_map *m, const sonde_key *keys, char *out,
                         uint32_t loc);
/* warn(msg): "WARNING: msg" on stderr at once. log(msg): msg + "\n" on the output. */
void sonde_out_warn(sonde_context *ctx, const char *message);
void sonde_out_log(sonde_context *ctx, const char *message);

/* ---- regular expressions (runtime/session/RegexMatch.cpp) ---- */

/* subject =~ pattern (POSIX extended): 1 if it matches, else 0. `cache` is a
 * module-global slot (one per pattern, initially NULL) where the first call
 * leaves the compiled pattern for this process. A match records its captures
 * for matched()/matched_str()/ngroups() on this thread. */
int64_t sonde_regex_match(sonde_context *ctx, void **cache, const char *pattern,
                          const char *subject, uint32_t loc);

/* ---- session control ---- */

/* exit(): no new handlers, end probes run. */
void sonde_exit(sonde_context *ctx);

#ifdef __cplusplus
}
#endif

#endif /* SONDE_RUNTIME_SESSION_CONTEXT_ABI_H */
