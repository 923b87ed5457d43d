/* Part of the BPF runtime, included once by BpfRuntime.bpf.c (not a
 * standalone header): the scratch area, a handler's entry and exit, errors and the session. */

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

/* What a failed bpf_map_update_elem() means for the script. */
static SONDE_INLINE int updateStatus(long rc) {
  return rc == -E2BIG ? SONDE_ERR_MAP_FULL : SONDE_BPF_ERROR_MAP_MEMORY;
}

/* The value of `key` in `map`, created zeroed if absent; null (the reason in
 * *status) when it cannot be. */
static SONDE_INLINE void *lookupOrCreate(void *map, char *key, int *status) {
  void *v = bpf_map_lookup_elem(map, key);
  if (v)
    return v;
  long rc = bpf_map_update_elem(map, key, sonde_zeros, BPF_NOEXIST);
  v = bpf_map_lookup_elem(map, key); /* another CPU may have added it meanwhile */
  if (!v)
    *status = updateStatus(rc);
  return v;
}

/* ------------------------------------------------------------------ entry and exit */

/* The context of a handler run: in scratch, zeroed, with its budget. */
SONDE_INLINE sonde_context *sonde_bpf_enter(void *tracepoint, uint32_t probe, int64_t actions) {
  char *s = scratch();
  if (!s)
    return 0;
  sonde_context *ctx = (sonde_context *)s;
  __builtin_memset(ctx, 0, SONDE_BPF_CONTEXT_CLEARED);
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

/* system() and switch_file(): sonde carries them out as their records arrive. */
void sonde_fn_system_1(sonde_context *ctx, const char *command, uint32_t loc) {
  (void)loc;
  textRecord(ctx, SONDE_BPF_RECORD_SYSTEM, command);
}
void sonde_fn_switch_file_0(sonde_context *ctx, uint32_t loc) {
  (void)loc;
  char *rec = recordArea((char *)ctx);
  sonde_bpf_record *r = (sonde_bpf_record *)rec;
  fillHeader(r, SONDE_BPF_RECORD_SWITCH_FILE, ctx->probe_index);
  r->size = sizeof *r;
  emit(rec, sizeof *r);
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
