/* Part of the BPF runtime, included once by BpfRuntime.bpf.c (not a
 * standalone header): the string built-ins of runtime/strings (substr, strpos,
 * str_replace, tokenize, text_str, strtol, errno_str, ...) with the same output
 * byte for byte, and kernel_string_quoted.
 *
 * They work on copies of their arguments in the string work area of scratch
 * (SONDE_BPF_STRING_WORK_BYTES at sonde_cfg_str_temp, which BpfTarget adds to
 * scratch when a script calls one of them): the copies are at offsets the
 * verifier knows, whatever the argument was (.rodata, scratch, a map value), and
 * the result may overwrite an argument. Loops whose path depends on the bytes go
 * through bpf_loop, their state in the work area: the verifier then checks one
 * step, not every iteration (strpos over two 512-byte strings would be 512 * 512
 * simulated steps as nested bounded loops, past its 1M-instruction limit). */

#include "runtime/strings/ErrnoList.h"

/* Set by BpfTarget: where the work area starts in scratch. */
extern const uint32_t sonde_cfg_str_temp;

/* The work area: string slots of sonde_cfg_str_column bytes, then strWork. The
 * output slot comes before the inputs so that an access the verifier bounds by
 * two string lengths stays inside scratch. */
enum {
  SLOT_TOKENS, /* tokenize's copy of its input, kept between calls */
  SLOT_OUT,    /* the result being built */
  SLOT_A,      /* the first string argument */
  SLOT_B,      /* the second */
  SLOT_C,      /* the third */
  SLOT_WORK,   /* strWork */
};

/* The state of a loop: read back from the map at each step, so the verifier
 * sees unknown (bounded) values and checks a step once. */
typedef struct strWork {
  int64_t found;          /* strpos: the first match, or -1 */
  int64_t inlen, outlen;  /* text_str: bytes left to read, room left to write */
  int64_t esc, escLength; /* text_str: the first escape a final "..." could split */
  int64_t value;          /* strtol */
  int32_t c;              /* text_str: the last character decoded */
  uint32_t m, r;          /* the lengths of the second and third arguments */
  uint32_t pos;           /* where the next step reads */
  uint32_t o;             /* the length of the result so far */
  uint32_t phase;         /* tokenize: TOKEN_* */
  uint32_t start, end;    /* tokenize: the token found */
  uint64_t delims[4];     /* tokenize: the delimiter bytes, a bit each */
} strWork;
_Static_assert(sizeof(strWork) <= SONDE_BPF_STRING_WORK_STATE, "strWork fits its slot");

/* Hides v from the compiler before its bounds check, so that the check is made
 * on v itself, the register the address is computed from (the verifier bounds
 * that register, not one the compiler derived from it, like v + 1). */
#define SONDE_OPAQUE(v) asm volatile("" : "+r"(v))

static SONDE_INLINE char *slot(char *s, uint32_t k) {
  return s + sonde_cfg_str_temp + k * sonde_cfg_str_column;
}
static SONDE_INLINE strWork *workOf(char *s) { return (strWork *)slot(s, SLOT_WORK); }

/* Copies src into a slot; its length (0 for an unreadable one). */
static SONDE_INLINE uint32_t load(char *dst, const char *src) {
  long n = bpf_probe_read_kernel_str(dst, sonde_cfg_str_cap, src);
  if (n < 1) {
    dst[0] = 0;
    return 0;
  }
  return n > sonde_cfg_str_cap ? sonde_cfg_str_cap - 1 : (uint32_t)(n - 1);
}

/* Appends ch to the result unless it is full (MAXSTRINGLEN - 1 bytes). */
static SONDE_INLINE void put(char *s, char ch) {
  strWork *w = workOf(s);
  uint32_t o = w->o;
  SONDE_OPAQUE(o);
  if (o < sonde_cfg_str_cap - 1) {
    slot(s, SLOT_OUT)[o] = ch;
    w->o = o + 1;
  }
}

/* Ends the result and copies it to out. */
static SONDE_INLINE void resultTo(char *s, char *out) {
  uint32_t o = workOf(s)->o;
  SONDE_OPAQUE(o);
  if (o >= sonde_cfg_str_cap)
    o = sonde_cfg_str_cap - 1;
  char *result = slot(s, SLOT_OUT);
  result[o] = 0;
  sonde_bpf_strcpy(out, result, sonde_cfg_str_cap);
}

/* ------------------------------------------------------------------ substr, stringat */

void sonde_fn_substr_3(sonde_context *ctx, char *out, const char *s, int64_t start, int64_t len,
                       uint32_t loc) {
  (void)loc;
  char *a = slot((char *)ctx, SLOT_A);
  uint32_t n = load(a, s);
  /* stap's strlcpy(out, s + start, clamp(len + 1, 0, MAXSTRINGLEN)); len + 1 wraps. */
  int64_t size = (int64_t)((uint64_t)len + 1);
  if (size <= 0 || start < 0 || start >= n) {
    out[0] = 0;
    return;
  }
  uint64_t limit = (uint64_t)size < sonde_cfg_str_cap ? (uint64_t)size : sonde_cfg_str_cap;
  uint64_t bytes = n - (uint64_t)start + 1; /* with the NUL */
  if (bytes > limit)
    bytes = limit;
  SONDE_OPAQUE(bytes);
  if (bytes > sonde_cfg_str_cap)
    bytes = sonde_cfg_str_cap;
  if (bpf_probe_read_kernel_str(out, bytes, a + start) < 0)
    out[0] = 0;
}

int64_t sonde_fn_stringat_2(sonde_context *ctx, const char *s, int64_t pos, uint32_t loc) {
  char *a = slot((char *)ctx, SLOT_A);
  uint32_t n = load(a, s);
  if (pos < 0 || pos >= n) {
    sonde_raise_message(ctx, "Position out of bounds", loc);
    return 0;
  }
  return (signed char)a[pos];
}

/* The start of a bpf_loop step: the scratch string area `s` (stop without it)
 * and its work record `w`. */
#define SONDE_STEP_WORK(s, w)                                                                      \
  char *s = scratch();                                                                             \
  if (!s)                                                                                          \
    return 1;                                                                                      \
  strWork *w = workOf(s)

/* ------------------------------------------------------------------ isinstr, strpos */

/* Whether B (m bytes) occurs in A at i: a mismatch ends the loop, so the
 * verifier walks it once per j. A's NUL stops a match running past its end. */
static SONDE_INLINE int matchesAt(char *s, uint32_t i, uint32_t m) {
  char *a = slot(s, SLOT_A), *b = slot(s, SLOT_B);
  /* Bounded before the loop: the compiler adds i to a once, j in the loop. */
  SONDE_OPAQUE(i);
  if (i >= sonde_cfg_str_cap)
    return 0;
  for (uint32_t j = 0; j < 65536; ++j) {
    if (j >= m)
      return 1;
    uint32_t k = i + j;
    if (j >= sonde_cfg_str_cap || k >= sonde_cfg_str_cap || a[k] != b[j])
      return 0;
  }
  return 0;
}

static long findStep(uint32_t i, void *data) {
  (void)data;
  SONDE_STEP_WORK(s, w);
  if (!matchesAt(s, i, w->m))
    return 0;
  w->found = i;
  return 1;
}

/* strstr(s1, s2) - s1, or -1. */
static SONDE_INLINE int64_t find(sonde_context *ctx, const char *s1, const char *s2) {
  char *s = (char *)ctx;
  uint32_t n = load(slot(s, SLOT_A), s1);
  uint32_t m = load(slot(s, SLOT_B), s2);
  if (m == 0)
    return 0;
  if (m > n)
    return -1;
  strWork *w = workOf(s);
  w->m = m;
  w->found = -1;
  bpf_loop(n - m + 1, findStep, 0, 0);
  return w->found;
}

int64_t sonde_fn_isinstr_2(sonde_context *ctx, const char *s1, const char *s2, uint32_t loc) {
  (void)loc;
  return find(ctx, s1, s2) >= 0;
}

int64_t sonde_fn_strpos_2(sonde_context *ctx, const char *s1, const char *s2, uint32_t loc) {
  (void)loc;
  return find(ctx, s1, s2);
}

/* ------------------------------------------------------------------ str_replace */

/* One byte of A: the replacement where find starts, else the byte itself. */
static long replaceStep(uint32_t i, void *data) {
  (void)data;
  SONDE_STEP_WORK(s, w);
  if (i < w->pos)
    return 0; /* inside a match already replaced */
  uint32_t o = w->o;
  SONDE_OPAQUE(o);
  SONDE_OPAQUE(i);
  if (o >= sonde_cfg_str_cap - 1 || i >= sonde_cfg_str_cap)
    return 1; /* the result is full */
  uint32_t m = w->m;
  if (matchesAt(s, i, m)) {
    uint32_t r = w->r;
    uint32_t room = sonde_cfg_str_cap - 1 - o;
    uint32_t count = r < room ? r : room;
    if (count >= sonde_cfg_str_cap)
      return 1;
    bpf_probe_read_kernel(slot(s, SLOT_OUT) + o, count, slot(s, SLOT_C));
    w->o = o + count;
    w->pos = i + m;
    return 0;
  }
  slot(s, SLOT_OUT)[o] = slot(s, SLOT_A)[i];
  w->o = o + 1;
  return 0;
}

void sonde_fn_str_replace_3(sonde_context *ctx, char *out, const char *str, const char *find,
                            const char *repl, uint32_t loc) {
  (void)loc;
  char *s = (char *)ctx;
  uint32_t n = load(slot(s, SLOT_A), str);
  uint32_t m = load(slot(s, SLOT_B), find);
  strWork *w = workOf(s);
  w->o = 0;
  if (m == 0) {
    sonde_bpf_strcpy(out, slot(s, SLOT_A), sonde_cfg_str_cap);
    return;
  }
  w->m = m;
  w->r = load(slot(s, SLOT_C), repl);
  w->pos = 0;
  bpf_loop(n, replaceStep, 0, 0);
  resultTo(s, out);
}

/* ------------------------------------------------------------------ tokenize */

/* The tokenizer between calls of one handler run: ctx->thread (cleared when a
 * handler starts) is 0 once the input is used up, else 1 + where the next token
 * starts in SLOT_TOKENS. */
enum { TOKEN_SKIP, TOKEN_IN, TOKEN_NONE, TOKEN_LAST, TOKEN_MORE };

static SONDE_INLINE int isDelimiter(strWork *w, unsigned char c) {
  return (w->delims[(c >> 6) & 3] >> (c & 63)) & 1;
}

/* Delimiter i (of B) into the set. */
static long delimiterStep(uint32_t i, void *data) {
  (void)data;
  char *s = scratch();
  if (!s)
    return 1;
  SONDE_OPAQUE(i);
  if (i >= sonde_cfg_str_cap)
    return 1;
  unsigned char c = (unsigned char)slot(s, SLOT_B)[i];
  workOf(s)->delims[(c >> 6) & 3] |= 1ull << (c & 63);
  return 0;
}

/* One byte: skip delimiters, then take the token up to the next one or the end. */
static long tokenStep(uint32_t i, void *data) {
  (void)i, (void)data;
  SONDE_STEP_WORK(s, w);
  uint32_t p = w->pos;
  SONDE_OPAQUE(p);
  if (p >= sonde_cfg_str_cap) {
    w->phase = w->phase == TOKEN_IN ? TOKEN_LAST : TOKEN_NONE;
    w->end = p;
    return 1;
  }
  unsigned char c = (unsigned char)slot(s, SLOT_TOKENS)[p];
  w->pos = p + 1;
  if (w->phase == TOKEN_SKIP) {
    if (c == 0) {
      w->phase = TOKEN_NONE;
      return 1;
    }
    if (!isDelimiter(w, c)) {
      w->phase = TOKEN_IN;
      w->start = p;
    }
    return 0;
  }
  if (c == 0 || isDelimiter(w, c)) {
    w->phase = c == 0 ? TOKEN_LAST : TOKEN_MORE;
    w->end = p;
    return 1;
  }
  return 0;
}

static SONDE_INLINE void tokenize(sonde_context *ctx, char *out, const char *input,
                                  const char *delim) {
  char *s = (char *)ctx;
  char first = 0;
  if (input && bpf_probe_read_kernel(&first, 1, input) < 0)
    first = 0;
  if (first) {
    load(slot(s, SLOT_TOKENS), input);
    ctx->thread = (void *)1;
  }
  uint64_t state = (uint64_t)ctx->thread;
  out[0] = 0;
  if (!state)
    return;
  strWork *w = workOf(s);
  char *b = slot(s, SLOT_B);
  uint32_t dn = load(b, delim);
  w->delims[0] = w->delims[1] = w->delims[2] = w->delims[3] = 0;
  bpf_loop(dn, delimiterStep, 0, 0);
  w->pos = (uint32_t)(state - 1);
  w->phase = TOKEN_SKIP;
  w->start = w->end = 0;
  bpf_loop(sonde_cfg_str_cap, tokenStep, 0, 0);
  uint32_t phase = w->phase;
  ctx->thread = phase == TOKEN_MORE ? (void *)(uint64_t)(w->end + 2) : 0;
  if (phase != TOKEN_LAST && phase != TOKEN_MORE)
    return;
  uint32_t start = w->start, end = w->end;
  if (start >= sonde_cfg_str_cap || end > sonde_cfg_str_cap || end <= start)
    return;
  uint32_t size = end - start + 1;
  SONDE_OPAQUE(size);
  if (size > sonde_cfg_str_cap)
    size = sonde_cfg_str_cap;
  if (bpf_probe_read_kernel_str(out, size, slot(s, SLOT_TOKENS) + start) < 0)
    out[0] = 0;
}

void sonde_fn_tokenize_2(sonde_context *ctx, char *out, const char *input, const char *delim,
                         uint32_t loc) {
  (void)loc;
  tokenize(ctx, out, input, delim);
}

void sonde_fn_tokenize_1(sonde_context *ctx, char *out, const char *delim, uint32_t loc) {
  (void)loc;
  tokenize(ctx, out, 0, delim);
}

/* ------------------------------------------------------------------ text_str and quoting */

static SONDE_INLINE char shortEscape(int32_t c) { return c == '"' ? '"' : sonde_short_escape(c); }

static SONDE_INLINE char hexDigit(int32_t nibble) {
  return (char)(nibble < 10 ? '0' + nibble : 'A' + nibble - 10);
}

/* One character of A (one byte, or a UTF-8 sequence), as TextEscape.cpp's
 * textStr loop body. */
static long textStep(uint32_t i, void *data) {
  (void)i, (void)data;
  SONDE_STEP_WORK(s, w);
  int64_t inlen = w->inlen;
  uint32_t ip = w->pos;
  SONDE_OPAQUE(ip);
  if (inlen <= 0 || ip >= sonde_cfg_str_cap)
    return 1;
  const unsigned char *in = (const unsigned char *)slot(s, SLOT_A);
  unsigned char lead = in[ip];
  int32_t n = 1, cp = 0;
  if ((lead & 0xE0) == 0xC0 && inlen >= 2) {
    n = 2;
    cp = lead & 0x1F;
  } else if ((lead & 0xF0) == 0xE0 && inlen >= 3) {
    n = 3;
    cp = lead & 0x0F;
  } else if ((lead & 0xF8) == 0xF0 && inlen >= 4) {
    n = 4;
    cp = lead & 0x07;
  }
  int wellFormed = n > 1;
  for (int32_t k = 1; k < 4; ++k) {
    if (!wellFormed || k >= n)
      break;
    uint32_t q = ip + (uint32_t)k;
    if (q >= sonde_cfg_str_cap || (in[q] & 0xC0) != 0x80) {
      wellFormed = 0;
      break;
    }
    cp = (cp << 6) | (in[q] & 0x3F);
  }
  if (wellFormed && ((cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF || cp < 0x80 ||
                     (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000)))
    wellFormed = 0;
  int32_t c = lead;
  if (wellFormed)
    c = cp;
  else
    n = 1;
  w->c = c;
  int64_t outlen = w->outlen;
  if (c == 0 || outlen <= 0)
    return 1;
  w->pos = ip + (uint32_t)n;
  w->inlen = inlen - n;
  int64_t num;
  char esc = shortEscape(c);
  if (n > 1) {
    num = c <= 0xFFFF ? 6 : 10; /* \uXXXX or \UXXXXXXXX */
  } else if (c < 0x7f && c >= 0x20 && c != '"' && c != '\\') {
    put(s, (char)c);
    w->outlen = outlen - 1;
    return 0;
  } else {
    num = esc ? 2 : 4; /* \n or \ooo */
  }
  if (w->esc < 0 && outlen - 3 < num) {
    w->esc = w->o;
    w->escLength = num;
  }
  if (outlen < num)
    return 1;
  put(s, '\\');
  if (n > 1) {
    put(s, c <= 0xFFFF ? 'u' : 'U');
    for (int32_t k = 7; k >= 0; --k)
      if (k <= num - 3)
        put(s, hexDigit((c >> (k * 4)) & 0xF));
  } else if (esc) {
    put(s, esc);
  } else {
    put(s, (char)('0' + ((c >> 6) & 3)));
    put(s, (char)('0' + ((c >> 3) & 7)));
    put(s, (char)('0' + (c & 7)));
  }
  w->outlen = outlen - num;
  return 0;
}

/* TextEscape.cpp's textStr of the string in A (never a buffer): inLimit and
 * outLimit are stap's inlen/outlen (<= 0 or too large: MAXSTRINGLEN - 1). */
static SONDE_INLINE void textOfA(char *s, char *out, int64_t inLimit, int64_t outLimit,
                                 int quoted) {
  strWork *w = workOf(s);
  int64_t longest = (int64_t)sonde_cfg_str_cap - 1;
  int64_t inlen = inLimit <= 0 || inLimit > longest ? longest : inLimit;
  int64_t outlen = outLimit <= 0 || outLimit > longest ? longest : outLimit;
  w->o = 0;
  if (quoted) {
    outlen = (outlen > 5 ? outlen : 5) - 2;
    put(s, '"');
  }
  w->inlen = inlen;
  w->outlen = outlen;
  w->esc = -1;
  w->escLength = 0;
  w->c = 0;
  w->pos = 0;
  bpf_loop(sonde_cfg_str_cap, textStep, 0, 0);
  if (quoted) {
    if (w->c != 0 && w->inlen > 0) {
      /* Cut short: end with `"...`, dropping an escape rather than splitting it. */
      int64_t cut = (int64_t)w->o - 3 + w->outlen;
      int64_t esc = w->esc;
      int64_t o = esc >= 0 && esc < cut && cut < esc + w->escLength ? esc : cut;
      w->o = o < 0 ? 0 : o >= sonde_cfg_str_cap ? sonde_cfg_str_cap - 1 : (uint32_t)o;
      put(s, '"');
      put(s, '.');
      put(s, '.');
      put(s, '.');
    } else {
      put(s, '"');
    }
  }
  resultTo(s, out);
}

void sonde_fn_text_str_1(sonde_context *ctx, char *out, const char *str, uint32_t loc) {
  (void)loc;
  char *s = (char *)ctx;
  load(slot(s, SLOT_A), str);
  textOfA(s, out, 0, 0, 0);
}

void sonde_fn_text_strn_3(sonde_context *ctx, char *out, const char *str, int64_t len,
                          int64_t quoted, uint32_t loc) {
  (void)loc;
  char *s = (char *)ctx;
  load(slot(s, SLOT_A), str);
  textOfA(s, out, 0, len < 0 ? 0 : len, quoted != 0);
}

void sonde_fn_string_quoted_1(sonde_context *ctx, char *out, const char *str, uint32_t loc) {
  (void)loc;
  char *s = (char *)ctx;
  load(slot(s, SLOT_A), str);
  textOfA(s, out, sonde_cfg_str_cap, sonde_cfg_str_cap, 1);
}

/* The string at addr (at most cap - 1 bytes; the current task's when `user`)
 * quoted as string_quoted; unreadable: its address in hex, unquoted, as
 * BuiltinsUserMemory.cpp does. */
static SONDE_INLINE void quotedString(sonde_context *ctx, char *out, int64_t addr, uint32_t cap,
                                      int user) {
  char *s = (char *)ctx;
  char *a = slot(s, SLOT_A);
  if (probeReadString(a, addr, cap, user) < 0) {
    __u64 value = (__u64)addr;
    bpf_snprintf(out, sonde_cfg_str_cap, "0x%llx", &value, sizeof value);
    return;
  }
  textOfA(s, out, sonde_cfg_str_cap, sonde_cfg_str_cap, 1);
}

void sonde_fn_kernel_string_quoted_1(sonde_context *ctx, char *out, int64_t addr, uint32_t loc) {
  (void)loc;
  quotedString(ctx, out, addr, sonde_cfg_str_cap, 0);
}

void sonde_fn_user_string_quoted_1(sonde_context *ctx, char *out, int64_t addr, uint32_t loc) {
  (void)loc;
  quotedString(ctx, out, addr, sonde_cfg_str_cap - 1, 1);
}

/* As user_string_n_quoted in userspace: a quoted text that fills the buffer
 * ends in `"..` (its `"...` cut to MAXSTRINGLEN - 1). */
void sonde_fn_user_string_n_quoted_2(sonde_context *ctx, char *out, int64_t addr, int64_t n,
                                     uint32_t loc) {
  (void)loc;
  quotedString(ctx, out, addr, userCapOf(n), 1);
  uint32_t cap = sonde_cfg_str_cap;
  if (cap >= 5 && boundedLength(out, cap) > cap - 2) {
    out[cap - 4] = '"';
    out[cap - 3] = '.';
    out[cap - 2] = '.';
  }
}

/* user_string_warn(addr[, warn_msg]): on a fault, stap's fault text as a
 * warning and warn_msg ("" without one) as the value. */
static SONDE_INLINE void userStringOrWarn(sonde_context *ctx, char *out, int64_t addr,
                                          const char *warnMsg) {
  long rc = probeReadString(out, addr, sonde_cfg_str_cap - 1, 1);
  if (rc >= 0)
    return;
  __u64 values[2] = {(__u64)rc, (__u64)addr};
  bpf_snprintf(out, sonde_cfg_str_cap, "user string copy fault %lld at 0x%llx [man error::fault]",
               values, sizeof values);
  textRecord(ctx, SONDE_BPF_RECORD_WARN, out);
  if (warnMsg)
    sonde_bpf_strcpy(out, warnMsg, sonde_cfg_str_cap);
  else
    out[0] = 0;
}

void sonde_fn_user_string_warn_1(sonde_context *ctx, char *out, int64_t addr, uint32_t loc) {
  (void)loc;
  userStringOrWarn(ctx, out, addr, 0);
}

void sonde_fn_user_string_warn_2(sonde_context *ctx, char *out, int64_t addr, const char *warn_msg,
                                 uint32_t loc) {
  (void)loc;
  userStringOrWarn(ctx, out, addr, warn_msg);
}

/* ------------------------------------------------------------------ strtol, isdigit */

static SONDE_INLINE int isHexDigit(char c) {
  char lower = (char)(c | 0x20);
  return (c >= '0' && c <= '9') || (lower >= 'a' && lower <= 'f');
}

/* One digit of simple_strtoull (0-9 and a-f count, whatever the base). */
static long digitStep(uint32_t i, void *data) {
  (void)i, (void)data;
  SONDE_STEP_WORK(s, w);
  uint32_t p = w->pos;
  SONDE_OPAQUE(p);
  if (p >= sonde_cfg_str_cap)
    return 1;
  char c = slot(s, SLOT_A)[p];
  char lower = (char)(c | 0x20);
  uint32_t digit;
  if (c >= '0' && c <= '9')
    digit = (uint32_t)(c - '0');
  else if (lower >= 'a' && lower <= 'f')
    digit = (uint32_t)(lower - 'a' + 10);
  else
    return 1;
  uint32_t radix = w->r;
  if (digit >= radix)
    return 1;
  w->value = (int64_t)((uint64_t)w->value * radix + digit); /* wraps, as the kernel's */
  w->pos = p + 1;
  return 0;
}

/* The kernel's simple_strtol, as StringToNumber.cpp. */
int64_t sonde_fn_strtol_2(sonde_context *ctx, const char *str, int64_t base, uint32_t loc) {
  (void)loc;
  char *s = (char *)ctx;
  char *a = slot(s, SLOT_A);
  load(a, str);
  uint32_t radix = (uint32_t)(uint64_t)base; /* the kernel takes an unsigned int */
  uint32_t p = 0;
  int negative = a[0] == '-';
  if (negative)
    p = 1;
  /* _parse_integer_fixup_radix: base 0 picks the radix; "0x" is skipped in 16. */
  if (radix == 0) {
    if (a[p] == '0')
      radix = ((a[p + 1] | 0x20) == 'x' && isHexDigit(a[p + 2])) ? 16 : 8;
    else
      radix = 10;
  }
  if (radix == 16 && a[p] == '0' && (a[p + 1] | 0x20) == 'x')
    p += 2;
  strWork *w = workOf(s);
  w->pos = p;
  w->r = radix;
  w->value = 0;
  bpf_loop(sonde_cfg_str_cap, digitStep, 0, 0);
  uint64_t value = (uint64_t)w->value;
  return negative ? (int64_t)(0 - value) : (int64_t)value;
}

int64_t sonde_fn_isdigit_1(sonde_context *ctx, const char *str, uint32_t loc) {
  (void)ctx, (void)loc;
  char c = 0;
  if (bpf_probe_read_kernel(&c, 1, str) < 0)
    return 0;
  return c >= '0' && c <= '9';
}

/* ------------------------------------------------------------------ errno_str */

/* The names in one .rodata struct, a field each (no pointers: .rodata cannot be
 * relocated), found by a switch over the numbers. */
#define SONDE_ERRNO_FIELD(e) char e##_[sizeof #e];
#define SONDE_ERRNO_TEXT(e) #e,
#define SONDE_ERRNO_CASE(e)                                                                        \
  case e: at = __builtin_offsetof(errnoNames, e##_); break;
typedef struct errnoNames {
  SONDE_ERRNO_NAMES(SONDE_ERRNO_FIELD)
} errnoNames;
static const errnoNames kErrnoNames = {SONDE_ERRNO_NAMES(SONDE_ERRNO_TEXT)};

void sonde_fn_errno_str_1(sonde_context *ctx, char *out, int64_t e, uint32_t loc) {
  (void)ctx, (void)loc;
  /* The sign is ignored: syscalls return -ENOENT. */
  uint64_t magnitude = e < 0 ? 0 - (uint64_t)e : (uint64_t)e;
  uint32_t at = 0;
  switch (magnitude) {
    SONDE_ERRNO_NAMES(SONDE_ERRNO_CASE)
  default: out[0] = 0; return;
  }
  if (at >= sizeof kErrnoNames ||
      bpf_probe_read_kernel_str(out, sonde_cfg_str_cap, (const char *)&kErrnoNames + at) < 0)
    out[0] = 0;
}
#undef SONDE_ERRNO_FIELD
#undef SONDE_ERRNO_TEXT
#undef SONDE_ERRNO_CASE
