// String and number built-ins (BuiltinAbi.h) over the pure runtime/strings code.
#include "runtime/session/BuiltinAbi.h"
#include "runtime/session/Runtime.h"

#include <cstdlib>
#include <cstring>

using namespace sonde::session;

namespace {
size_t cap(sonde_context *ctx) { return runtimeOf(ctx).maxStringLen(); }
} // namespace

extern "C" {

int64_t sonde_fn_strlen_1(sonde_context *, const char *s, uint32_t) { return sonde_str_strlen(s); }

void sonde_fn_substr_3(sonde_context *ctx, char *out, const char *s, int64_t start, int64_t len,
                       uint32_t) {
  sonde_str_substr(s, start, len, out, cap(ctx));
}

int64_t sonde_fn_stringat_2(sonde_context *ctx, const char *s, int64_t pos, uint32_t loc) {
  int64_t result = 0;
  if (const char *error = sonde_str_stringat(s, pos, &result))
    sonde_raise_message(ctx, error, loc);
  return result;
}

int64_t sonde_fn_isinstr_2(sonde_context *, const char *s1, const char *s2, uint32_t) {
  return sonde_str_isinstr(s1, s2);
}

int64_t sonde_fn_strpos_2(sonde_context *, const char *s1, const char *s2, uint32_t) {
  return sonde_str_strpos(s1, s2);
}

void sonde_fn_str_replace_3(sonde_context *ctx, char *out, const char *s, const char *find,
                            const char *repl, uint32_t) {
  sonde_str_replace(s, find, repl, out, cap(ctx));
}

void sonde_fn_tokenize_2(sonde_context *ctx, char *out, const char *input, const char *delim,
                         uint32_t) {
  sonde_str_tokenize(&threadOf(ctx).tokenizer, input, delim, out, cap(ctx));
}

void sonde_fn_tokenize_1(sonde_context *ctx, char *out, const char *delim, uint32_t loc) {
  sonde_fn_tokenize_2(ctx, out, "", delim, loc);
}

void sonde_fn_text_str_1(sonde_context *ctx, char *out, const char *s, uint32_t) {
  sonde_str_text_str(s, out, cap(ctx));
}

void sonde_fn_text_strn_3(sonde_context *ctx, char *out, const char *s, int64_t len, int64_t quoted,
                          uint32_t) {
  sonde_str_text_strn(s, len, quoted, out, cap(ctx));
}

void sonde_fn_string_quoted_1(sonde_context *ctx, char *out, const char *s, uint32_t) {
  sonde_str_string_quoted(s, out, cap(ctx));
}

int64_t sonde_fn_strtol_2(sonde_context *, const char *s, int64_t base, uint32_t) {
  return sonde_str_strtol(s, base);
}

int64_t sonde_fn_isdigit_1(sonde_context *, const char *s, uint32_t) {
  return sonde_str_isdigit(s);
}

void sonde_fn_errno_str_1(sonde_context *ctx, char *out, int64_t e, uint32_t) {
  sonde_str_errno_str(e, out, cap(ctx));
}

int64_t sonde_fn_abs_1(sonde_context *, int64_t x, uint32_t) {
  // Wraps for INT64_MIN, like the rest of the language's arithmetic.
  return x < 0 ? static_cast<int64_t>(0 - static_cast<uint64_t>(x)) : x;
}
int64_t sonde_fn_min_2(sonde_context *, int64_t a, int64_t b, uint32_t) { return a < b ? a : b; }
int64_t sonde_fn_max_2(sonde_context *, int64_t a, int64_t b, uint32_t) { return a > b ? a : b; }

int64_t sonde_fn_randint_1(sonde_context *ctx, int64_t n, uint32_t loc) {
  // stap: uniform in [0, n) for n up to 2^20.
  if (n > (int64_t{1} << 20)) {
    sonde_raise(ctx, SONDE_ERROR_RANDINT_RANGE, loc);
    return 0;
  }
  if (n <= 0)
    return 0;
  uint64_t &x = threadOf(ctx).randomState;
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  return static_cast<int64_t>(x % static_cast<uint64_t>(n));
}

void sonde_fn_exit_0(sonde_context *ctx, uint32_t) { sonde_exit(ctx); }

// error() and assert() name no token, as in stap: "ERROR: msg in probe begin".
void sonde_fn_error_1(sonde_context *ctx, const char *message, uint32_t) {
  sonde_raise_message(ctx, message, SONDE_NO_LOCATION);
}

void sonde_fn_warn_1(sonde_context *ctx, const char *message, uint32_t) {
  sonde_out_warn(ctx, message);
}

void sonde_fn_log_1(sonde_context *ctx, const char *message, uint32_t) {
  sonde_out_log(ctx, message);
}

void sonde_fn_assert_1(sonde_context *ctx, int64_t cond, uint32_t) {
  if (!cond)
    sonde_raise_message(ctx, "Assertion failed", SONDE_NO_LOCATION);
}

void sonde_fn_assert_2(sonde_context *ctx, int64_t cond, const char *message, uint32_t) {
  if (!cond)
    sonde_raise_message(ctx, message, SONDE_NO_LOCATION);
}

} // extern "C"
