// The C ABI of the pure string and conversion built-ins (language.md §6), with
// the exact behaviour of stap's tapset (tapset/string.stp, tokenize.stp,
// errno.stp, linux/ctime.stp, task_time.stp, proc_mem.stp, linux/inet.stp).
//
// Conventions:
// - Inputs are NUL-terminated script strings.
// - String results go into `out`, `cap` bytes (cap = MAXSTRINGLEN), always
//   NUL-terminated; the functions return the result's strlen.
// - Functions that can raise a runtime error return its text (a static string)
//   or NULL on success, and pass their result through an out parameter.
// - Nothing here allocates, locks or does I/O.
#pragma once

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// ------------------------------------------------------------------ string.stp

// strlen(s)
int64_t sonde_str_strlen(const char *s);

// substr(s, start, length): `length` bytes from 0-based `start`; "" when start is
// outside s (or length is negative).
size_t sonde_str_substr(const char *s, int64_t start, int64_t length, char *out, size_t cap);

// stringat(s, pos): the byte at pos as a signed char (so bytes >= 0x80 are
// negative, as on stap/x86). Out of range: "Position out of bounds", *result 0.
const char *sonde_str_stringat(const char *s, int64_t pos, int64_t *result);

// isinstr(s1, s2): 1 if s2 occurs in s1 (always for s2 == ""), else 0.
int64_t sonde_str_isinstr(const char *s1, const char *s2);

// strpos(s1, s2): offset of the first s2 in s1, or -1.
int64_t sonde_str_strpos(const char *s1, const char *s2);

// str_replace(s, find, replacement): every occurrence replaced, left to right;
// s unchanged when find is "".
size_t sonde_str_replace(const char *s, const char *find, const char *replacement, char *out,
                         size_t cap);

// strtol(s, base): the kernel's simple_strtol: optional '-', base 0 picks 16 for
// "0x" + hex digit, 8 for a leading 0, else 10; "0x" is skipped in base 16;
// digits stop at the first invalid byte; no whitespace or '+'; wraps on overflow.
int64_t sonde_str_strtol(const char *s, int64_t base);

// isdigit(s): 1 if the first byte is '0'..'9', else 0.
int64_t sonde_str_isdigit(const char *s);

// text_str(s): non-printables as C escapes, UTF-8 sequences as \uXXXX or
// \UXXXXXXXX, '"' and '\' escaped; at most cap - 1 bytes.
size_t sonde_str_text_str(const char *s, char *out, size_t cap);

// text_strn(s, len, quoted): the same limited to len bytes of output (0 = no
// limit); when quoted, wrapped in '"', with "..." after the quote if cut short.
size_t sonde_str_text_strn(const char *s, int64_t len, int64_t quoted, char *out, size_t cap);

// string_quoted(s): text_strn(s, 0, 1).
size_t sonde_str_string_quoted(const char *s, char *out, size_t cap);

// user_buffer_quoted's text: the first inlen bytes of buf (<= 0 or too large:
// cap - 1), NULs included (as \0), quoted into at most outlen bytes like
// text_strn. Only `readable` bytes of buf may be read: -1 (stap's fault) if the
// text needs more, else the length written.
int64_t sonde_str_buffer_quoted(const char *buf, int64_t readable, int64_t inlen, int64_t outlen,
                                char *out, size_t cap);

// ------------------------------------------------------------------ tokenize.stp

// tokenize()'s state between calls; lives in the caller's per-thread context.
// Zero-initialized means "nothing to tokenize" (the next token is "").
typedef struct SondeTokenizer {
  char *text; // caller storage of `capacity` bytes (MAXSTRINGLEN)
  uint32_t capacity;
  uint32_t next;   // offset where the next token starts
  uint32_t active; // 0 once the input is used up
} SondeTokenizer;

// tokenize(input, delim): with a non-empty input starts over on a copy of it;
// with "" continues the previous input. Returns the next non-empty token
// delimited by any byte of delim, or "" when there is none.
size_t sonde_str_tokenize(SondeTokenizer *state, const char *input, const char *delim, char *out,
                          size_t cap);

// ------------------------------------------------------------------ conversions

// errno_str(e): "ENOENT" for 2 or -2; "" for numbers without a name.
size_t sonde_str_errno_str(int64_t err, char *out, size_t cap);

// ctime(secs): "Thu Jan  1 00:00:00 1970" (UTC, 24 characters). Outside the
// 32-bit time_t range: "Time too far in the future to be converted" / "... in
// the past ...", with out set to "".
const char *sonde_str_ctime(int64_t secs, char *out, size_t cap, size_t *length);

// htonl(x) and family: byte-order conversion of the low 16/32/64 bits; the
// 16- and 32-bit forms return them zero-extended.
int64_t sonde_str_htonll(int64_t x);
int64_t sonde_str_htonl(int64_t x);
int64_t sonde_str_htons(int64_t x);
int64_t sonde_str_ntohll(int64_t x);
int64_t sonde_str_ntohl(int64_t x);
int64_t sonde_str_ntohs(int64_t x);

#ifdef __cplusplus
} // extern "C"
#endif
