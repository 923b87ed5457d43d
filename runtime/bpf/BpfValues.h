/* Part of the BPF runtime, included once by BpfRuntime.bpf.c (not a
 * standalone header): strings, tracepoint fields, arrays and aggregates in BPF maps. */

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
  long rc = bpf_map_update_elem(&sonde_arrays, key, val, BPF_ANY);
  return rc ? updateStatus(rc) : SONDE_OK;
}

/* The element's value in the map, created zero if missing. */
static SONDE_INLINE int elementRef(sonde_map *m, const sonde_key *keys, void **ref) {
  char *s = scratch();
  if (!s)
    return SONDE_ERR_NO_MEMORY;
  int status = SONDE_OK;
  void *v = lookupOrCreate(&sonde_arrays, buildKey(s, globalOf(m), keys), &status);
  if (!v)
    return status;
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
  int status = SONDE_OK;
  sonde_kernel_stat_block *b = lookupOrCreate(&sonde_aggregates, buildKey(s, g, keys), &status);
  if (!b)
    return status;
  sonde_kernel_stat_add(b, v, g->variance_shift, g->uses_variance);
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
