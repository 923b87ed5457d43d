// The C ABI of the formatting engine: everything that turns script values into
// text exactly as SystemTap prints them (language.md §5, §7). Generated code and
// the runtime call these; no C++ type crosses this header.
//
// Conventions shared by every function here:
// - Output goes into a caller buffer `out` of `cap` bytes and never beyond it;
//   longer output is truncated, as stap truncates at its buffer end.
// - "print" forms write raw bytes (no NUL) and return the byte count, at most `cap`.
//   Stream output uses a buffer of SONDE_PRINT_BUFFER_SIZE, stap's per-print limit.
// - "sprint" forms NUL-terminate and return strlen, at most cap - 1; pass
//   cap = MAXSTRINGLEN for script strings.
// - Nothing here allocates, locks or does I/O.
#pragma once

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// stap's STP_BUFFER_SIZE: the most one printf/print writes to the output stream.
#define SONDE_PRINT_BUFFER_SIZE 8192

// ------------------------------------------------------------------ format strings

// Conversion kinds; same order as the compiler's ast::FormatComponent::Conv.
typedef enum SondeConv {
  SONDE_CONV_LITERAL = 0,  // text copied verbatim
  SONDE_CONV_SIGNED_DEC,   // %d %i
  SONDE_CONV_UNSIGNED_DEC, // %u
  SONDE_CONV_HEX_LOWER,    // %x
  SONDE_CONV_HEX_UPPER,    // %X
  SONDE_CONV_OCTAL,        // %o
  SONDE_CONV_POINTER,      // %p, which is %#x
  SONDE_CONV_CHAR,         // %c
  SONDE_CONV_STRING,       // %s
  SONDE_CONV_BINARY,       // %b
  SONDE_CONV_MEMORY,       // %m
  SONDE_CONV_MEMORY_HEX,   // %M
  SONDE_CONV_PERCENT       // %%
} SondeConv;

typedef enum SondeFormatFlag {
  SONDE_FMT_LEFT = 1,  // '-'
  SONDE_FMT_PLUS = 2,  // '+'
  SONDE_FMT_SPACE = 4, // ' '
  SONDE_FMT_ZERO = 8,  // '0'
  SONDE_FMT_HASH = 16  // '#'
} SondeFormatFlag;

typedef enum SondeFormatSize {
  SONDE_SIZE_NONE = 0,  // not written (also "%.d": stap treats a bare '.' as absent)
  SONDE_SIZE_GIVEN = 1, // digits
  SONDE_SIZE_STAR = 2   // '*': taken from the next argument
} SondeFormatSize;

// One literal run or one conversion of a parsed format string.
typedef struct SondeFormatItem {
  uint32_t offset;    // where the item starts in the format text
  uint32_t length;    // literal: the text; conversion: as written, e.g. "%-08d"
  int32_t width;      // when width_kind == SONDE_SIZE_GIVEN (saturates at INT32_MAX)
  int32_t precision;  // when precision_kind == SONDE_SIZE_GIVEN
  uint8_t conv;       // SondeConv
  uint8_t flags;      // SondeFormatFlag bits
  uint8_t width_kind; // SondeFormatSize
  uint8_t precision_kind;
  uint8_t flag_chars;  // flag characters written, repeats included (stap accepts 1)
  uint8_t length_mods; // count of 'l' (0-2; stap accepts 1)
  uint8_t reserved[2];
} SondeFormatItem;

// A parsed format, as the module keeps it: `text` must outlive it.
typedef struct SondeFormatSpec {
  const char *text;
  const SondeFormatItem *items;
  uint32_t item_count;
  uint32_t arg_count; // arguments consumed: one per conversion plus one per '*'
} SondeFormatSpec;

typedef enum SondeFormatParseStatus {
  SONDE_FORMAT_PARSED = 0,
  SONDE_FORMAT_INCOMPLETE = 1,    // "trailing incomplete print format conversion"
  SONDE_FORMAT_BAD_CONVERSION = 2 // "invalid or missing conversion specifier"
} SondeFormatParseStatus;

// Parses text[0, len) into items; `%[flags][width][.precision][l|ll]conv` with any
// combination of flags (a superset of stap, which takes one). Writes at most
// `capacity` items and sets *count to the number the format needs, so a call with
// capacity 0 sizes the array. On failure sets *error_offset to the offending '%'.
SondeFormatParseStatus sonde_format_parse(const char *text, size_t len, SondeFormatItem *items,
                                          size_t capacity, size_t *count, size_t *error_offset);

// stap's wording for a parse status ("" for SONDE_FORMAT_PARSED).
const char *sonde_format_parse_message(SondeFormatParseStatus status);

// Arguments the items consume (conversions plus '*' widths and precisions).
uint32_t sonde_format_arg_count(const SondeFormatItem *items, size_t count);

// ------------------------------------------------------------------ printf / sprintf

// One argument, typed by the conversion that consumes it: `s` for %s, `i` for all
// others (including '*' values and %m/%M addresses).
typedef union SondeFormatArg {
  int64_t i;
  const char *s;
} SondeFormatArg;

// Reads target memory for %m/%M; how (kernel, user, another process) is the
// caller's business. Copies n bytes at addr into dst and returns 0, or returns
// non-zero if any of them cannot be read. `user` is 1 for "%#m" (user memory).
typedef struct SondeMemoryReader {
  int (*read)(void *context, uint64_t addr, void *dst, size_t n, int user);
  void *context;
} SondeMemoryReader;

// Where a failed call leaves stap's runtime error text, e.g.
// "read fault [man error::fault] at 0x1000" or "5000 is too many bytes for a
// memory dump". Only %m and %M can fail.
typedef struct SondeFormatError {
  const char *message; // NULL after success; else points at `text`
  char text[96];
} SondeFormatError;

// printf: formats spec with args into out[0, cap) and returns the bytes written.
// On error returns 0 (stap discards the whole print) and fills *error; `memory`
// and `error` may be NULL when the format has no %m/%M.
size_t sonde_format_print(const SondeFormatSpec *spec, const SondeFormatArg *args, char *out,
                          size_t cap, const SondeMemoryReader *memory, SondeFormatError *error);

// sprintf: the same into a NUL-terminated string (cap = MAXSTRINGLEN); returns
// its strlen, which a NUL from %c, %b or %0s cuts short.
size_t sonde_format_sprint(const SondeFormatSpec *spec, const SondeFormatArg *args, char *out,
                           size_t cap, const SondeMemoryReader *memory, SondeFormatError *error);

// ------------------------------------------------------------------ print family

typedef enum SondeValueKind { SONDE_VALUE_LONG = 0, SONDE_VALUE_STRING = 1 } SondeValueKind;

// A script value: a long (`i`) or a string (`s`).
typedef struct SondeValue {
  uint32_t kind; // SondeValueKind
  int64_t i;
  const char *s;
} SondeValue;

// print/println/printd/printdln: values concatenated (longs in decimal), joined
// by `delimiter` when it is non-NULL, then "\n" when `newline` is non-zero.
size_t sonde_print_values(const SondeValue *values, size_t count, const char *delimiter,
                          int newline, char *out, size_t cap);

// sprint/sprintln/sprintd/sprintdln: the same as a NUL-terminated string.
size_t sonde_sprint_values(const SondeValue *values, size_t count, const char *delimiter,
                           int newline, char *out, size_t cap);

// ------------------------------------------------------------------ histograms

#define SONDE_HIST_LOG_BUCKETS 128 // @hist_log: bucket 64 holds 0, 65+k holds [2^k, 2^(k+1))
#define SONDE_HIST_LOG_BUCKET0 64  // 63-k holds the mirror negatives, bucket 0 INT64_MIN
#define SONDE_HIST_MAX_BUCKETS 128 // stap's STP_MAX_BUCKETS, the @hist_linear limit
#define SONDE_HIST_ELISION 2       // stap's HIST_ELISION default
// Upper bound of one rendered histogram (128 rows of at most 94 bytes, header).
#define SONDE_HIST_TEXT_MAX 12288

typedef enum SondeHistKind { SONDE_HIST_LOG = 1, SONDE_HIST_LINEAR = 2 } SondeHistKind;

// A merged histogram: `bucket_count` counts. Linear: bucket 0 counts values below
// `start`, bucket i in 1..n the range [start + (i-1)*interval, start + i*interval),
// the last bucket the rest. Log: SONDE_HIST_LOG_BUCKETS buckets, start/interval unused.
typedef struct SondeHistogram {
  uint32_t kind; // SondeHistKind
  uint32_t bucket_count;
  int64_t start;
  int64_t interval;
  const int64_t *buckets;
} SondeHistogram;

// The smallest value of log bucket `bucket` (its row label).
int64_t sonde_hist_log_bucket_value(int32_t bucket);
// Buckets of @hist_linear(s, start, stop, interval) including under- and overflow,
// or 0 when stap refuses the parameters (interval <= 0, more than SONDE_HIST_MAX_BUCKETS).
int32_t sonde_hist_linear_bucket_count(int64_t start, int64_t stop, int64_t interval);

// print(@hist_*(s)): the table stap prints, ending with a blank line. `elision` is
// HIST_ELISION: empty rows kept around data (0 drops all, < 0 never elides).
// Returns 0 and writes nothing when every bucket is empty (the caller reports
// "empty aggregate"). The whole table fits in SONDE_HIST_TEXT_MAX bytes.
size_t sonde_hist_print(const SondeHistogram *hist, int64_t elision, char *out, size_t cap);
// sprint(@hist_*(s)): the same as a NUL-terminated string.
size_t sonde_hist_sprint(const SondeHistogram *hist, int64_t elision, char *out, size_t cap);

// ------------------------------------------------------------------ end-of-run dump

typedef enum SondeDumpValueKind {
  SONDE_DUMP_LONG = 0,
  SONDE_DUMP_STRING = 1,
  SONDE_DUMP_STATS = 2
} SondeDumpValueKind;

// What the dump shows of an aggregate.
typedef struct SondeStatsSummary {
  int64_t count;
  int64_t sum;
  int64_t min;
  int64_t max;
} SondeStatsSummary;

typedef struct SondeDumpEntry {
  const SondeValue *keys;  // `arity` index values; unused for scalars
  SondeValue value;        // SONDE_DUMP_LONG / SONDE_DUMP_STRING
  SondeStatsSummary stats; // SONDE_DUMP_STATS
} SondeDumpEntry;

// A written-but-never-read global. Scalars: arity 0 and exactly one entry.
typedef struct SondeDumpGlobal {
  const char *name;
  uint32_t value_kind; // SondeDumpValueKind
  uint32_t arity;
  SondeDumpEntry *entries;
  size_t entry_count;
} SondeDumpGlobal;

// Orders array entries as stap's `foreach (... in name-)`: by value descending
// (strings by strcmp, stats by @count); ties keep their given order.
void sonde_dump_sort(SondeDumpGlobal *global);
// Lines the global prints: 1 for a scalar, entry_count for an array.
size_t sonde_dump_line_count(const SondeDumpGlobal *global);
// Line `index` with its "\n": `x=5`, `s="str"`, `a[1,"k"]=5`,
// `st @count=2 @min=3 @max=10 @sum=13 @avg=6`, `st @count=0x0` when empty.
size_t sonde_dump_line(const SondeDumpGlobal *global, size_t index, char *out, size_t cap);

// ------------------------------------------------------------------ runtime error text

// A source token as stap names it: "operator '/' at app.probe:9:22"; keywords
// print no text ("keyword at f:1:2").
size_t sonde_error_token(const char *kind, const char *text, const char *file, uint32_t line,
                         uint32_t column, char *out, size_t cap);

// "ERROR: <message>[ near <token>][ (called from <token>)...][ in probe <pp>]\n";
// `near`, `called_from` and `probe_point` may be NULL / empty.
size_t sonde_error_line(const char *message, const char *near, const char *const *called_from,
                        size_t called_from_count, const char *probe_point, char *out, size_t cap);

// "WARNING: Number of errors: N, skipped probes: M\n" (nothing when both are 0).
size_t sonde_error_run_summary(uint64_t errors, uint64_t skipped, char *out, size_t cap);

// "Pass 5: run failed.  [man error::pass5]\n"
size_t sonde_error_pass5_failed(char *out, size_t cap);

// "ERROR: Skipped too many probes, check MAXSKIPPED or try again with stap -t for
// more details.\n"
size_t sonde_error_too_many_skipped(char *out, size_t cap);

#ifdef __cplusplus
} // extern "C"
#endif
