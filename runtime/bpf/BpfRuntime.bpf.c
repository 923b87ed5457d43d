/* The runtime of kernel probes: the sonde_* entry points generated code calls
 * (runtime/session/ContextAbi.h, runtime/values/ValueAbi.h, BuiltinAbi.h),
 * written for the BPF machine. Built to LLVM bitcode with the project and
 * linked into every kernel module by compiler/codegen/BpfTarget, which defines
 * the sonde_cfg_* constants for the script and inlines everything into one
 * program per probe. The layout of state and records is in BpfAbi.h. */
// libbpf's helper declarations need the kernel's types first.
#include <linux/bpf.h>
// (kept apart so include sorting leaves the order alone)
#include <bpf/bpf_helpers.h>

#include "runtime/bpf/BpfAbi.h"
#include "runtime/session/BuiltinAbi.h"
#include "runtime/values/ValueAbi.h"

#define SONDE_INLINE __attribute__((always_inline))

/* Set by BpfTarget for the script being compiled. */
extern const uint32_t sonde_cfg_str_cap;       /* MAXSTRINGLEN */
extern const uint32_t sonde_cfg_str_column;    /* a string key column: MAXSTRINGLEN, 8-aligned */
extern const uint32_t sonde_cfg_key_bytes;     /* the array/aggregate key, id included */
extern const uint32_t sonde_cfg_value_bytes;   /* an array value, also the aggregate block */
extern const uint32_t sonde_cfg_record_offset; /* where the record is built */
extern const uint32_t sonde_cfg_record_bytes;  /* the largest record */
extern const uint32_t sonde_cfg_record_mask;   /* bit_ceil(record bytes) - 1 */
/* struct task_struct's real_parent and tgid, from the kernel's BTF (ppid()). */
extern const uint32_t sonde_cfg_task_real_parent;
extern const uint32_t sonde_cfg_task_tgid;
extern sonde_bpf_control sonde_globals; /* .bss: control, then the scalars */
/* .rodata zeros, as many as the larger of a key and a value: BPF cannot memset
 * more than 1 KiB in one go, so keys and values are cleared by copying these. */
extern const char sonde_zeros[];

/* Sizes here are placeholders: sonde sets the script's before loading. */
struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, 1);
  __uint(key_size, 4);
  __uint(value_size, 8);
} sonde_scratch SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 1);
  __uint(key_size, 8);
  __uint(value_size, 8);
} sonde_arrays SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_HASH);
  __uint(max_entries, 1);
  __uint(key_size, 8);
  __uint(value_size, 8);
} sonde_aggregates SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_RINGBUF);
  __uint(max_entries, 4096);
} sonde_events SEC(".maps");

/* ------------------------------------------------------------------ scratch */

static SONDE_INLINE char *scratch(void) {
  uint32_t zero = 0;
  return bpf_map_lookup_elem(&sonde_scratch, &zero);
}
static SONDE_INLINE char *keyArea(char *s) { return s + SONDE_BPF_CONTEXT_BYTES; }
static SONDE_INLINE char *valueArea(char *s) { return keyArea(s) + sonde_cfg_key_bytes; }
static SONDE_INLINE char *recordArea(char *s) { return s + sonde_cfg_record_offset; }

/* The hash key of (global, keys): zero padded so equal keys hash alike. */
static SONDE_INLINE char *buildKey(char *s, const sonde_bpf_global *g, const sonde_key *keys) {
  char *key = keyArea(s);
  bpf_probe_read_kernel(key, sonde_cfg_key_bytes, sonde_zeros);
  *(uint64_t *)key = g->id;
  uint32_t off = 8;
  for (uint32_t c = 0; c < 9; ++c) {
    if (c >= g->key_count)
      break;
    if (g->string_keys & (1u << c)) {
      bpf_probe_read_kernel_str(key + off, sonde_cfg_str_cap, keys[c].s);
      off += sonde_cfg_str_column;
    } else {
      *(int64_t *)(key + off) = keys[c].l;
      off += 8;
    }
  }
  return key;
}

/* The value of `key` in `map`, created zeroed if absent; null when full. */
static SONDE_INLINE void *lookupOrCreate(void *map, char *s, char *key) {
  void *v = bpf_map_lookup_elem(map, key);
  if (v)
    return v;
  (void)s;
  bpf_map_update_elem(map, key, sonde_zeros, BPF_NOEXIST);
  return bpf_map_lookup_elem(map, key);
}

/* ------------------------------------------------------------------ entry and exit */

/* The context of a handler run: in scratch, zeroed, with its budget. */
SONDE_INLINE sonde_context *sonde_bpf_enter(void *tracepoint, uint32_t probe, int64_t actions) {
  char *s = scratch();
  if (!s)
    return 0;
  sonde_context *ctx = (sonde_context *)s;
  __builtin_memset(ctx, 0, SONDE_BPF_CONTEXT_BYTES);
  ctx->actions_left = actions;
  ctx->probe_index = probe;
  ctx->probe_data = tracepoint;
  return ctx;
}

static SONDE_INLINE void fillHeader(sonde_bpf_record *r, uint32_t kind, uint32_t id) {
  uint64_t pidTgid = bpf_get_current_pid_tgid();
  r->kind = kind;
  r->id = id;
  r->pid = (uint32_t)(pidTgid >> 32);
  r->tid = (uint32_t)pidTgid;
  r->time_ns = bpf_ktime_get_ns();
  r->cpu = bpf_get_smp_processor_id();
  r->string_mask = 0;
}

/* A string in a record: u16 length, the bytes, NUL; the bytes taken, rounded to 8. */
static SONDE_INLINE uint32_t putString(char *at, const char *s) {
  long n = bpf_probe_read_kernel_str(at + 2, sonde_cfg_str_cap, s);
  if (n < 1) {
    n = 1;
    at[2] = 0;
  }
  if (n > sonde_cfg_str_cap)
    n = sonde_cfg_str_cap;
  *(uint16_t *)at = (uint16_t)(n - 1);
  return ((uint32_t)n + 2 + 7) & ~7u;
}

static SONDE_INLINE void emit(char *record, uint32_t size) {
  if (bpf_ringbuf_output(&sonde_events, record, size, 0) != 0)
    __sync_fetch_and_add(&sonde_globals.lost_records, 1);
}

/* After the handler: an error it ended with goes to sonde as a record. */
SONDE_INLINE void sonde_bpf_leave(sonde_context *ctx) {
  if (!ctx->error)
    return;
  // Like stap's session state: past MAXERRORS (or at abort()) no handler starts,
  // without waiting for sonde to read the error.
  if (ctx->error == SONDE_CONTEXT_ABORTED ||
      __sync_fetch_and_add(&sonde_globals.errors, 1) + 1 > sonde_globals.max_errors)
    sonde_globals.running = 0;
  char *rec = recordArea((char *)ctx);
  sonde_bpf_record *r = (sonde_bpf_record *)rec;
  fillHeader(r, SONDE_BPF_RECORD_ERROR, ctx->probe_index);
  sonde_bpf_error *e = (sonde_bpf_error *)(r + 1);
  e->status = (int32_t)ctx->reserved;
  e->location = ctx->error_location;
  e->detail = (uint64_t)ctx->error_message;
  e->rc = (int64_t)ctx->runtime;
  uint32_t size = sizeof *r + sizeof *e;
  if (e->status == SONDE_BPF_ERROR_MESSAGE) {
    e->detail = 0;
    size += putString(rec + size, ctx->error_message);
  }
  r->size = size;
  emit(rec, size);
}

/* ------------------------------------------------------------------ errors, session */

SONDE_INLINE void sonde_raise(sonde_context *ctx, int32_t status, uint32_t loc) {
  ctx->error = status == SONDE_ERROR_ABORT ? SONDE_CONTEXT_ABORTED : 1;
  ctx->uncatchable = status == SONDE_ERROR_MAXACTION || status == SONDE_ERROR_ABORT;
  ctx->reserved = (uint32_t)status;
  ctx->error_location = loc;
}

SONDE_INLINE void sonde_raise_map_full(sonde_context *ctx, const sonde_map *m, uint32_t loc) {
  (void)m;
  sonde_raise(ctx, SONDE_ERR_MAP_FULL, loc);
}

/* Kernel probes take no locks: map updates are the kernel's, aggregates per CPU. */
SONDE_INLINE int sonde_locks_take(sonde_segment *seg, const uint64_t *offsets, uint32_t count) {
  (void)seg, (void)offsets, (void)count;
  return SONDE_OK;
}
SONDE_INLINE void sonde_locks_release(sonde_segment *seg, const uint64_t *offsets, uint32_t count) {
  (void)seg, (void)offsets, (void)count;
}
SONDE_INLINE int sonde_session_note_skipped(sonde_segment *seg) {
  (void)seg;
  return 0;
}
SONDE_INLINE int sonde_session_running(const sonde_segment *seg) {
  (void)seg;
  return sonde_globals.running != 0;
}

/* error(text) and assert(): the error carries the text; no location, as stap. */
SONDE_INLINE void sonde_raise_message(sonde_context *ctx, const char *message, uint32_t loc) {
  sonde_raise(ctx, SONDE_BPF_ERROR_MESSAGE, loc);
  ctx->error_message = (char *)message;
}
void sonde_fn_error_1(sonde_context *ctx, const char *message, uint32_t loc) {
  (void)loc;
  sonde_raise_message(ctx, message, SONDE_NO_LOCATION);
}
void sonde_fn_assert_1(sonde_context *ctx, int64_t cond, uint32_t loc) {
  (void)loc;
  if (!cond)
    sonde_raise_message(ctx, "Assertion failed", SONDE_NO_LOCATION);
}
void sonde_fn_assert_2(sonde_context *ctx, int64_t cond, const char *message, uint32_t loc) {
  (void)loc;
  if (!cond)
    sonde_raise_message(ctx, message, SONDE_NO_LOCATION);
}
void sonde_fn_abort_0(sonde_context *ctx, uint32_t loc) {
  sonde_raise(ctx, SONDE_ERROR_ABORT, loc);
}

/* warn(text) and log(text): a record sonde prints as it prints them. */
static SONDE_INLINE void textRecord(sonde_context *ctx, uint32_t kind, const char *text) {
  char *rec = recordArea((char *)ctx);
  sonde_bpf_record *r = (sonde_bpf_record *)rec;
  fillHeader(r, kind, ctx->probe_index);
  uint32_t size = sizeof *r + putString(rec + sizeof *r, text);
  r->size = size;
  emit(rec, size);
}
void sonde_fn_warn_1(sonde_context *ctx, const char *message, uint32_t loc) {
  (void)loc;
  textRecord(ctx, SONDE_BPF_RECORD_WARN, message);
}
void sonde_fn_log_1(sonde_context *ctx, const char *message, uint32_t loc) {
  (void)loc;
  textRecord(ctx, SONDE_BPF_RECORD_LOG, message);
}

void sonde_fn_exit_0(sonde_context *ctx, uint32_t loc) {
  (void)loc;
  sonde_globals.running = 0;
  char *rec = recordArea((char *)ctx);
  sonde_bpf_record *r = (sonde_bpf_record *)rec;
  fillHeader(r, SONDE_BPF_RECORD_EXIT, ctx->probe_index);
  r->size = sizeof *r;
  emit(rec, sizeof *r);
}

/* ------------------------------------------------------------------ strings */

SONDE_INLINE void sonde_bpf_strcpy(char *dst, const char *src, uint32_t cap) {
  if (dst == src)
    return;
  if (bpf_probe_read_kernel_str(dst, cap, src) < 0)
    dst[0] = 0;
}

static SONDE_INLINE uint32_t boundedLength(const char *s, uint32_t cap) {
  uint32_t n = 0;
  for (uint32_t i = 0; i < 65536; ++i) {
    if (i + 1 >= cap || !s[i])
      break;
    ++n;
  }
  return n;
}

SONDE_INLINE void sonde_bpf_strcat(char *dst, const char *src, uint32_t cap) {
  uint32_t len = boundedLength(dst, cap);
  if (len + 1 >= cap)
    return;
  if (bpf_probe_read_kernel_str(dst + len, cap - len, src) < 0)
    dst[len] = 0;
}

SONDE_INLINE int32_t sonde_bpf_strcmp(const char *a, const char *b, uint32_t cap) {
  for (uint32_t i = 0; i < 65536; ++i) {
    if (i >= cap)
      break;
    unsigned char x = (unsigned char)a[i], y = (unsigned char)b[i];
    if (x != y)
      return x < y ? -1 : 1;
    if (!x)
      break;
  }
  return 0;
}

/* ------------------------------------------------------------------ tracepoint fields */

/* $field of an integer or pointer field: `size` bytes at `offset`. */
SONDE_INLINE int64_t sonde_bpf_field_long(sonde_context *ctx, uint32_t offset, uint32_t size,
                                          int32_t isSigned) {
  const char *base = (const char *)ctx->probe_data;
  int64_t v = 0;
  switch (size) {
  case 1: {
    uint8_t x = 0;
    bpf_probe_read_kernel(&x, 1, base + offset);
    v = isSigned ? (int64_t)(int8_t)x : (int64_t)x;
    break;
  }
  case 2: {
    uint16_t x = 0;
    bpf_probe_read_kernel(&x, 2, base + offset);
    v = isSigned ? (int64_t)(int16_t)x : (int64_t)x;
    break;
  }
  case 4: {
    uint32_t x = 0;
    bpf_probe_read_kernel(&x, 4, base + offset);
    v = isSigned ? (int64_t)(int32_t)x : (int64_t)x;
    break;
  }
  default: bpf_probe_read_kernel(&v, 8, base + offset); break;
  }
  return v;
}

/* $field of a string field: a char[length] array at `offset`, or (length 0) a
 * __data_loc (rel 0) / __rel_loc (rel 1) descriptor there. */
SONDE_INLINE void sonde_bpf_field_string(sonde_context *ctx, char *out, uint32_t offset,
                                         uint32_t length, int32_t rel) {
  const char *base = (const char *)ctx->probe_data;
  const char *src = base + offset;
  uint32_t cap = sonde_cfg_str_cap;
  if (length == 0) {
    uint32_t loc = 0;
    bpf_probe_read_kernel(&loc, 4, base + offset);
    src = (rel ? base + offset + 4 : base) + (loc & 0xffff);
  } else if (length + 1 < cap) {
    cap = length + 1;
  }
  if (bpf_probe_read_kernel_str(out, cap, src) < 0)
    out[0] = 0;
}

/* ------------------------------------------------------------------ arrays */

static SONDE_INLINE const sonde_bpf_global *globalOf(const void *header) {
  return (const sonde_bpf_global *)header;
}

SONDE_INLINE int64_t sonde_map_get_long(const sonde_map *m, const sonde_key *keys) {
  char *s = scratch();
  if (!s)
    return 0;
  int64_t *v = bpf_map_lookup_elem(&sonde_arrays, buildKey(s, globalOf(m), keys));
  return v ? *v : 0;
}

/* Stores an element: the long `value`, or the string `text` when not null. */
static SONDE_INLINE int setElement(sonde_map *m, const sonde_key *keys, int64_t value,
                                   const char *text) {
  char *s = scratch();
  if (!s)
    return SONDE_ERR_NO_MEMORY;
  char *key = buildKey(s, globalOf(m), keys);
  char *val = valueArea(s);
  bpf_probe_read_kernel(val, sonde_cfg_value_bytes, sonde_zeros);
  if (text)
    bpf_probe_read_kernel_str(val, sonde_cfg_str_cap, text);
  else
    *(int64_t *)val = value;
  return bpf_map_update_elem(&sonde_arrays, key, val, BPF_ANY) ? SONDE_ERR_MAP_FULL : SONDE_OK;
}

/* The element's value in the map, created zero if missing. */
static SONDE_INLINE int elementRef(sonde_map *m, const sonde_key *keys, void **ref) {
  char *s = scratch();
  if (!s)
    return SONDE_ERR_NO_MEMORY;
  void *v = lookupOrCreate(&sonde_arrays, s, buildKey(s, globalOf(m), keys));
  if (!v)
    return SONDE_ERR_MAP_FULL;
  *ref = v;
  return SONDE_OK;
}

SONDE_INLINE int sonde_map_set_long(sonde_map *m, const sonde_key *keys, int64_t value) {
  return setElement(m, keys, value, 0);
}

SONDE_INLINE int sonde_map_ref_long(sonde_map *m, const sonde_key *keys, int64_t **ref) {
  return elementRef(m, keys, (void **)ref);
}

SONDE_INLINE void sonde_map_get_string(const sonde_map *m, const sonde_key *keys, char *out) {
  char *s = scratch();
  const char *v = s ? bpf_map_lookup_elem(&sonde_arrays, buildKey(s, globalOf(m), keys)) : 0;
  if (!v || bpf_probe_read_kernel_str(out, sonde_cfg_str_cap, v) < 0)
    out[0] = 0;
}

SONDE_INLINE int sonde_map_set_string(sonde_map *m, const sonde_key *keys, const char *value) {
  return setElement(m, keys, 0, value);
}

SONDE_INLINE int sonde_map_ref_string(sonde_map *m, const sonde_key *keys, char **ref) {
  return elementRef(m, keys, (void **)ref);
}

SONDE_INLINE int sonde_map_exists(const sonde_map *m, const sonde_key *keys) {
  char *s = scratch();
  return s && bpf_map_lookup_elem(&sonde_arrays, buildKey(s, globalOf(m), keys)) ? 1 : 0;
}

SONDE_INLINE void sonde_map_delete(sonde_map *m, const sonde_key *keys) {
  char *s = scratch();
  if (s)
    bpf_map_delete_elem(&sonde_arrays, buildKey(s, globalOf(m), keys));
}

/* ------------------------------------------------------------------ aggregates */

/* stap's accumulator (runtime/values/SegmentFormat.h StatBlock), then buckets. */
typedef struct statBlock {
  uint32_t slotLock, reserved;
  int64_t count, sum, min, max;
  int64_t avgS, m2, varianceS;
  int64_t buckets[128];
} statBlock;

static SONDE_INLINE uint32_t bucketOf(const sonde_bpf_global *g, int64_t v) {
  if (g->hist_kind == SONDE_STAT_HIST_LOG) {
    if (v == 0)
      return 64;
    uint64_t magnitude = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    uint32_t res = 65 + (63 - (uint32_t)__builtin_clzll(magnitude));
    if (v < 0)
      res = 128 - res;
    return res < 128 ? res : 127;
  }
  int64_t off = (int64_t)((uint64_t)v - (uint64_t)g->hist_low);
  uint64_t index = off < 0 ? 0 : (uint64_t)off / (uint64_t)g->hist_width + 1;
  return index >= g->buckets - 1 ? g->buckets - 1 : (uint32_t)index;
}

static SONDE_INLINE int statsAdd(const sonde_bpf_global *g, const sonde_key *keys, int64_t v) {
  char *s = scratch();
  if (!s)
    return SONDE_ERR_NO_MEMORY;
  statBlock *b = lookupOrCreate(&sonde_aggregates, s, buildKey(s, g, keys));
  if (!b)
    return SONDE_ERR_MAP_FULL;
  if (b->count == 0) {
    b->count = 1;
    b->sum = b->min = b->max = v;
  } else {
    b->count += 1;
    b->sum += v;
    if (v > b->max)
      b->max = v;
    if (v < b->min)
      b->min = v;
  }
  if (g->hist_kind != SONDE_STAT_HIST_NONE) {
    uint64_t bucket = bucketOf(g, v);
    /* Hide the range the compiler proved, so the mask the verifier needs stays. */
    asm volatile("" : "+r"(bucket));
    b->buckets[bucket & 127] += 1;
  }
  return SONDE_OK;
}

SONDE_INLINE void sonde_stats_add(sonde_stats *st, int64_t value) {
  statsAdd(globalOf(st), 0, value);
}

SONDE_INLINE int sonde_map_stats_add(sonde_map *m, const sonde_key *keys, int64_t value) {
  return statsAdd(globalOf(m), keys, value);
}

/* ------------------------------------------------------------------ printf */

/* printf(format #fmt, args): the record; bit i of string_mask: args[i] is a string. */
SONDE_INLINE void sonde_bpf_printf(sonde_context *ctx, uint32_t fmt, const SondeFormatArg *args,
                                   uint32_t count, uint64_t stringMask) {
  char *rec = recordArea((char *)ctx);
  sonde_bpf_record *r = (sonde_bpf_record *)rec;
  fillHeader(r, SONDE_BPF_RECORD_PRINTF, fmt);
  r->string_mask = stringMask;
  uint32_t off = sizeof *r;
  for (uint32_t c = 0; c < 64; ++c) {
    if (c >= count)
      break;
    // The record is sized for every string at full length, so the mask never
    // changes the offset; it gives the verifier the bound the arithmetic hides
    // (the scratch has a string's room past the masked range).
    asm volatile("" : "+r"(off));
    off &= sonde_cfg_record_mask;
    if (stringMask & (1ull << c)) {
      long n = bpf_probe_read_kernel_str(rec + off + 2, sonde_cfg_str_cap, args[c].s);
      if (n < 1) {
        n = 1;
        rec[off + 2] = 0;
      }
      if (n > sonde_cfg_str_cap)
        n = sonde_cfg_str_cap;
      *(uint16_t *)(rec + off) = (uint16_t)(n - 1);
      off += ((uint32_t)n + 2 + 7) & ~7u;
    } else {
      *(int64_t *)(rec + off) = args[c].i;
      off += 8;
    }
  }
  r->size = off;
  if (off <= sonde_cfg_record_bytes)
    emit(rec, off);
}

/* ------------------------------------------------------------------ built-ins */

int64_t sonde_fn_pid_0(sonde_context *ctx, uint32_t loc) {
  (void)ctx, (void)loc;
  return (int64_t)(bpf_get_current_pid_tgid() >> 32);
}
int64_t sonde_fn_tid_0(sonde_context *ctx, uint32_t loc) {
  (void)ctx, (void)loc;
  return (int64_t)(uint32_t)bpf_get_current_pid_tgid();
}
int64_t sonde_fn_ppid_0(sonde_context *ctx, uint32_t loc) {
  (void)ctx, (void)loc;
  const char *task = (const char *)bpf_get_current_task();
  const char *parent = 0;
  int32_t tgid = 0;
  if (bpf_probe_read_kernel(&parent, sizeof parent, task + sonde_cfg_task_real_parent) < 0 ||
      bpf_probe_read_kernel(&tgid, sizeof tgid, parent + sonde_cfg_task_tgid) < 0)
    return 0;
  return tgid;
}
int64_t sonde_fn_uid_0(sonde_context *ctx, uint32_t loc) {
  (void)ctx, (void)loc;
  return (int64_t)(uint32_t)bpf_get_current_uid_gid();
}
int64_t sonde_fn_gid_0(sonde_context *ctx, uint32_t loc) {
  (void)ctx, (void)loc;
  return (int64_t)(bpf_get_current_uid_gid() >> 32);
}
int64_t sonde_fn_cpu_0(sonde_context *ctx, uint32_t loc) {
  (void)ctx, (void)loc;
  return bpf_get_smp_processor_id();
}
int64_t sonde_fn_target_0(sonde_context *ctx, uint32_t loc) {
  (void)ctx, (void)loc;
  return sonde_globals.target_pid;
}
void sonde_fn_execname_0(sonde_context *ctx, char *out, uint32_t loc) {
  (void)ctx, (void)loc;
  char comm[16];
  if (bpf_get_current_comm(comm, sizeof comm) ||
      bpf_probe_read_kernel_str(out, sonde_cfg_str_cap, comm) < 0)
    out[0] = 0;
}

static SONDE_INLINE int64_t realtimeNs(void) {
  return (int64_t)bpf_ktime_get_ns() + sonde_globals.realtime_offset_ns;
}
int64_t sonde_fn_gettimeofday_ns_0(sonde_context *ctx, uint32_t loc) {
  (void)ctx, (void)loc;
  return realtimeNs();
}
int64_t sonde_fn_gettimeofday_us_0(sonde_context *ctx, uint32_t loc) {
  (void)ctx, (void)loc;
  return realtimeNs() / 1000;
}
int64_t sonde_fn_gettimeofday_ms_0(sonde_context *ctx, uint32_t loc) {
  (void)ctx, (void)loc;
  return realtimeNs() / 1000000;
}
int64_t sonde_fn_gettimeofday_s_0(sonde_context *ctx, uint32_t loc) {
  (void)ctx, (void)loc;
  return realtimeNs() / 1000000000;
}
int64_t sonde_fn_ktime_get_ns_0(sonde_context *ctx, uint32_t loc) {
  (void)ctx, (void)loc;
  return (int64_t)bpf_ktime_get_ns();
}
int64_t sonde_fn_local_clock_ns_0(sonde_context *ctx, uint32_t loc) {
  (void)ctx, (void)loc;
  return (int64_t)bpf_ktime_get_ns();
}
int64_t sonde_fn_local_clock_us_0(sonde_context *ctx, uint32_t loc) {
  (void)ctx, (void)loc;
  return (int64_t)bpf_ktime_get_ns() / 1000;
}
int64_t sonde_fn_local_clock_ms_0(sonde_context *ctx, uint32_t loc) {
  (void)ctx, (void)loc;
  return (int64_t)bpf_ktime_get_ns() / 1000000;
}
int64_t sonde_fn_local_clock_s_0(sonde_context *ctx, uint32_t loc) {
  (void)ctx, (void)loc;
  return (int64_t)bpf_ktime_get_ns() / 1000000000;
}

/* A string read failed: stap's fault error, with the address and the code. */
static SONDE_INLINE void stringFault(sonde_context *ctx, int32_t status, int64_t addr, long rc,
                                     uint32_t loc) {
  sonde_raise(ctx, status, loc);
  ctx->error_message = (char *)addr;
  ctx->runtime = (void *)rc;
}

static SONDE_INLINE void readString(sonde_context *ctx, char *out, int64_t addr, uint32_t cap,
                                    int user, uint32_t loc) {
  long rc = user ? bpf_probe_read_user_str(out, cap, (const void *)addr)
                 : bpf_probe_read_kernel_str(out, cap, (const void *)addr);
  if (rc < 0) {
    out[0] = 0;
    stringFault(ctx, user ? SONDE_BPF_ERROR_USER_STRING : SONDE_BPF_ERROR_KERNEL_STRING, addr, rc,
                loc);
  }
}

static SONDE_INLINE uint32_t capOf(int64_t n) {
  return n < 0 ? 1 : n + 1 < sonde_cfg_str_cap ? (uint32_t)n + 1 : sonde_cfg_str_cap;
}

void sonde_fn_kernel_string_1(sonde_context *ctx, char *out, int64_t addr, uint32_t loc) {
  readString(ctx, out, addr, sonde_cfg_str_cap, 0, loc);
}
void sonde_fn_kernel_string_n_2(sonde_context *ctx, char *out, int64_t addr, int64_t n,
                                uint32_t loc) {
  readString(ctx, out, addr, capOf(n), 0, loc);
}
void sonde_fn_user_string_1(sonde_context *ctx, char *out, int64_t addr, uint32_t loc) {
  readString(ctx, out, addr, sonde_cfg_str_cap, 1, loc);
}
void sonde_fn_user_string_n_2(sonde_context *ctx, char *out, int64_t addr, int64_t n,
                              uint32_t loc) {
  readString(ctx, out, addr, capOf(n), 1, loc);
}

/* ------------------------------------------------------------------ sprintf */

SONDE_INLINE void sonde_bpf_sprintf(char *out, const char *format, const uint64_t *args,
                                    uint32_t bytes) {
  uint32_t len = boundedLength(out, sonde_cfg_str_cap);
  asm volatile("" : "+r"(len));
  if (len + 1 >= sonde_cfg_str_cap)
    return;
  bpf_snprintf(out + len, sonde_cfg_str_cap - len, format, (__u64 *)args, bytes);
}

/* ------------------------------------------------------------------ try/catch */

/* 16 hex digits at `at` when they fit: fixed positions keep the verifier's work small. */
static SONDE_INLINE void appendHex(char *out, uint32_t at, uint64_t value) {
  if (at + 17 > sonde_cfg_str_cap || at > 65536)
    return;
#pragma unroll
  for (int i = 0; i < 16; ++i) {
    uint32_t digit = (uint32_t)(value >> (60 - 4 * i)) & 15;
    out[at + i] = (char)(digit < 10 ? '0' + digit : 'a' + digit - 10);
  }
  out[at + 16] = 0;
}

/* catch: the message of the error caught, as sonde would word it. */
void sonde_error_take(sonde_context *ctx, char *out) {
  int32_t status = (int32_t)ctx->reserved;
  int fault = status == SONDE_BPF_ERROR_USER_STRING || status == SONDE_BPF_ERROR_KERNEL_STRING ||
              status == SONDE_BPF_ERROR_READ;
  const char *text = status == SONDE_ERROR_DIVISION_BY_ZERO    ? "division by 0"
                     : status == SONDE_BPF_ERROR_USER_STRING   ? "user string copy fault at 0x"
                     : status == SONDE_BPF_ERROR_KERNEL_STRING ? "kernel string copy fault at 0x"
                     : status == SONDE_BPF_ERROR_READ ? "read fault [man error::fault] at 0x"
                     : status == SONDE_ERR_MAP_FULL   ? "Array overflow, check MAXMAPENTRIES"
                                                      : "error";
  sonde_bpf_strcpy(out, status == SONDE_BPF_ERROR_MESSAGE ? ctx->error_message : text,
                   sonde_cfg_str_cap);
  if (fault)
    appendHex(out, boundedLength(out, sonde_cfg_str_cap), (uint64_t)ctx->error_message);
  ctx->error = 0;
  ctx->uncatchable = 0;
}

/* ------------------------------------------------------------------ tracepoint arguments */

SONDE_INLINE int64_t sonde_bpf_kernel_value(sonde_context *ctx, int64_t addr, uint32_t size,
                                            int32_t isSigned, uint32_t loc) {
  uint64_t raw = 0;
  long rc = bpf_probe_read_kernel(&raw, size <= 8 ? size : 8, (const void *)addr);
  if (rc < 0) {
    stringFault(ctx, SONDE_BPF_ERROR_READ, addr, rc, loc);
    return 0;
  }
  uint32_t shift = 64 - 8 * (size <= 8 ? size : 8);
  return isSigned ? (int64_t)(raw << shift) >> shift : (int64_t)((raw << shift) >> shift);
}

SONDE_INLINE void sonde_bpf_kernel_chars(sonde_context *ctx, char *out, int64_t addr,
                                         uint32_t length, uint32_t loc) {
  uint32_t cap = length + 1 < sonde_cfg_str_cap ? length + 1 : sonde_cfg_str_cap;
  long rc = bpf_probe_read_kernel_str(out, cap, (const void *)addr);
  if (rc < 0) {
    out[0] = 0;
    stringFault(ctx, SONDE_BPF_ERROR_READ, addr, rc, loc);
  }
}

/* ------------------------------------------------------------------ pure functions */

int64_t sonde_fn_strlen_1(sonde_context *ctx, const char *s, uint32_t loc) {
  (void)ctx, (void)loc;
  return boundedLength(s, sonde_cfg_str_cap);
}
int64_t sonde_fn_abs_1(sonde_context *ctx, int64_t x, uint32_t loc) {
  (void)ctx, (void)loc;
  return x < 0 ? (int64_t)(0 - (uint64_t)x) : x;
}
int64_t sonde_fn_min_2(sonde_context *ctx, int64_t a, int64_t b, uint32_t loc) {
  (void)ctx, (void)loc;
  return a < b ? a : b;
}
int64_t sonde_fn_max_2(sonde_context *ctx, int64_t a, int64_t b, uint32_t loc) {
  (void)ctx, (void)loc;
  return a > b ? a : b;
}
/* BPF is little-endian here: network order is a byte swap of the low bytes. */
int64_t sonde_fn_htonl_1(sonde_context *ctx, int64_t x, uint32_t loc) {
  (void)ctx, (void)loc;
  return __builtin_bswap32((uint32_t)x);
}
int64_t sonde_fn_htons_1(sonde_context *ctx, int64_t x, uint32_t loc) {
  (void)ctx, (void)loc;
  return __builtin_bswap16((uint16_t)x);
}
int64_t sonde_fn_htonll_1(sonde_context *ctx, int64_t x, uint32_t loc) {
  (void)ctx, (void)loc;
  return (int64_t)__builtin_bswap64((uint64_t)x);
}
int64_t sonde_fn_ntohl_1(sonde_context *ctx, int64_t x, uint32_t loc) {
  return sonde_fn_htonl_1(ctx, x, loc);
}
int64_t sonde_fn_ntohs_1(sonde_context *ctx, int64_t x, uint32_t loc) {
  return sonde_fn_htons_1(ctx, x, loc);
}
int64_t sonde_fn_ntohll_1(sonde_context *ctx, int64_t x, uint32_t loc) {
  return sonde_fn_htonll_1(ctx, x, loc);
}

/* user_string(addr, err_msg) and the like: err_msg instead of an error. */
static SONDE_INLINE void readStringOr(char *out, int64_t addr, uint32_t cap, int user,
                                      const char *fallback) {
  long rc = user ? bpf_probe_read_user_str(out, cap, (const void *)addr)
                 : bpf_probe_read_kernel_str(out, cap, (const void *)addr);
  if (rc < 0)
    sonde_bpf_strcpy(out, fallback, sonde_cfg_str_cap);
}
void sonde_fn_user_string_2(sonde_context *ctx, char *out, int64_t addr, const char *err_msg,
                            uint32_t loc) {
  (void)ctx, (void)loc;
  readStringOr(out, addr, sonde_cfg_str_cap, 1, err_msg);
}
void sonde_fn_user_string_n_3(sonde_context *ctx, char *out, int64_t addr, int64_t n,
                              const char *err_msg, uint32_t loc) {
  (void)ctx, (void)loc;
  readStringOr(out, addr, capOf(n), 1, err_msg);
}
void sonde_fn_kernel_string_2(sonde_context *ctx, char *out, int64_t addr, const char *err_msg,
                              uint32_t loc) {
  (void)ctx, (void)loc;
  readStringOr(out, addr, sonde_cfg_str_cap, 0, err_msg);
}

/* user_int(addr) & co.: 0 on a fault; the _error forms and kernel_* raise stap's
 * "read fault". */
#define SONDE_BPF_READ(fn, type, user, raise)                                                      \
  int64_t fn(sonde_context *ctx, int64_t addr, uint32_t loc) {                                     \
    type value = 0;                                                                                \
    long rc = user ? bpf_probe_read_user(&value, sizeof value, (const void *)addr)                 \
                   : bpf_probe_read_kernel(&value, sizeof value, (const void *)addr);              \
    if (rc < 0 && raise)                                                                           \
      stringFault(ctx, SONDE_BPF_ERROR_READ, addr, rc, loc);                                       \
    return rc < 0 ? 0 : (int64_t)value;                                                            \
  }
#define SONDE_BPF_USER_READ(name, type)                                                            \
  SONDE_BPF_READ(sonde_fn_user_##name##_1, type, 1, 0)                                             \
  SONDE_BPF_READ(sonde_fn_user_##name##_error_1, type, 1, 1)
SONDE_BPF_USER_READ(char, signed char)
SONDE_BPF_USER_READ(short, short)
SONDE_BPF_USER_READ(ushort, unsigned short)
SONDE_BPF_USER_READ(int, int)
SONDE_BPF_USER_READ(long, long)
SONDE_BPF_USER_READ(ulong, unsigned long)
SONDE_BPF_USER_READ(int8, int8_t)
SONDE_BPF_USER_READ(uint8, uint8_t)
SONDE_BPF_USER_READ(int16, int16_t)
SONDE_BPF_USER_READ(uint16, uint16_t)
SONDE_BPF_USER_READ(int32, int32_t)
SONDE_BPF_USER_READ(uint32, uint32_t)
SONDE_BPF_USER_READ(int64, int64_t)
SONDE_BPF_USER_READ(uint64, uint64_t)
SONDE_BPF_READ(sonde_fn_kernel_char_1, signed char, 0, 1)
SONDE_BPF_READ(sonde_fn_kernel_short_1, short, 0, 1)
SONDE_BPF_READ(sonde_fn_kernel_int_1, int, 0, 1)
SONDE_BPF_READ(sonde_fn_kernel_long_1, long, 0, 1)
SONDE_BPF_READ(sonde_fn_kernel_pointer_1, unsigned long, 0, 1)

char LICENSE[] SEC("license") = "GPL";
