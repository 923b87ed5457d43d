/* Part of the BPF runtime, included once by BpfRuntime.bpf.c (not a
 * standalone header): the built-in functions, sprintf, try/catch and tracepoint arguments. */

/* ------------------------------------------------------------------ built-ins */

int64_t sonde_fn_pid_0(sonde_context *ctx, uint32_t loc) {
  (void)ctx, (void)loc;
  return (int64_t)(bpf_get_current_pid_tgid() >> 32);
}
int64_t sonde_fn_tid_0(sonde_context *ctx, uint32_t loc) {
  (void)ctx, (void)loc;
  return (int64_t)(uint32_t)bpf_get_current_pid_tgid();
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
int64_t sonde_fn_stp_pid_0(sonde_context *ctx, uint32_t loc) {
  (void)ctx, (void)loc;
  return sonde_globals.consumer_pid;
}
int64_t sonde_fn_jiffies_0(sonde_context *ctx, uint32_t loc) {
  (void)ctx, (void)loc;
  return (int64_t)bpf_jiffies64();
}
/* A tracepoint fires in the kernel, never at a return, never in user mode. */
int64_t sonde_fn_is_return_0(sonde_context *ctx, uint32_t loc) {
  (void)ctx, (void)loc;
  return 0;
}
int64_t sonde_fn_user_mode_0(sonde_context *ctx, uint32_t loc) {
  (void)ctx, (void)loc;
  return 0;
}
void sonde_fn_probe_type_0(sonde_context *ctx, char *out, uint32_t loc) {
  (void)ctx, (void)loc;
  sonde_bpf_strcpy(out, "kernel_tracepoint", sonde_cfg_str_cap);
}
/* Uniform in [0, n) for n up to 2^20, as stap's. */
int64_t sonde_fn_randint_1(sonde_context *ctx, int64_t n, uint32_t loc) {
  if (n > (1 << 20)) {
    sonde_raise(ctx, SONDE_ERROR_RANDINT_RANGE, loc);
    return 0;
  }
  return n <= 0 ? 0 : (int64_t)(bpf_get_prandom_u32() % (uint32_t)n);
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

/* The string at addr, at most cap - 1 bytes, from the current task's memory
 * (`user`) or the kernel's: the helper's result (negative on a fault). */
static SONDE_INLINE long probeReadString(char *out, int64_t addr, uint32_t cap, int user) {
  return user ? bpf_probe_read_user_str(out, cap, (const void *)addr)
              : bpf_probe_read_kernel_str(out, cap, (const void *)addr);
}

static SONDE_INLINE void readString(sonde_context *ctx, char *out, int64_t addr, uint32_t cap,
                                    int user, uint32_t loc) {
  long rc = probeReadString(out, addr, cap, user);
  if (rc < 0) {
    out[0] = 0;
    stringFault(ctx, user ? SONDE_BPF_ERROR_USER_STRING : SONDE_BPF_ERROR_KERNEL_STRING, addr, rc,
                loc);
  }
}

/* The bytes kernel_string_n(addr, n) copies: clamp(n + 1, 1, MAXSTRINGLEN), as
 * conversions.stp; user strings stop one short, at MAXSTRINGLEN - 1
 * (uconversions.stp), so they keep at most MAXSTRINGLEN - 2 characters. */
static SONDE_INLINE uint32_t clampedCap(int64_t n, uint32_t most) {
  uint32_t cap = n < 0 ? 1 : n + 1 < most ? (uint32_t)n + 1 : most;
  /* Checked again where the verifier sees it, whatever the compiler made of the above. */
  asm volatile("" : "+r"(cap));
  return cap > most ? most : cap;
}
static SONDE_INLINE uint32_t capOf(int64_t n) { return clampedCap(n, sonde_cfg_str_cap); }
static SONDE_INLINE uint32_t userCapOf(int64_t n) { return clampedCap(n, sonde_cfg_str_cap - 1); }

void sonde_fn_kernel_string_1(sonde_context *ctx, char *out, int64_t addr, uint32_t loc) {
  readString(ctx, out, addr, sonde_cfg_str_cap, 0, loc);
}
void sonde_fn_kernel_string_n_2(sonde_context *ctx, char *out, int64_t addr, int64_t n,
                                uint32_t loc) {
  readString(ctx, out, addr, capOf(n), 0, loc);
}
void sonde_fn_user_string_1(sonde_context *ctx, char *out, int64_t addr, uint32_t loc) {
  readString(ctx, out, addr, sonde_cfg_str_cap - 1, 1, loc);
}
void sonde_fn_user_string_n_2(sonde_context *ctx, char *out, int64_t addr, int64_t n,
                              uint32_t loc) {
  readString(ctx, out, addr, userCapOf(n), 1, loc);
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
  ctx->error = 0;
  ctx->uncatchable = 0;
  if (status == SONDE_BPF_ERROR_UNWIND) {
    __u64 level = (__u64)ctx->runtime;
    bpf_snprintf(out, sonde_cfg_str_cap, "reached end of stack before unwinding to level %d",
                 &level, sizeof level);
    return;
  }
  /* Faults in the words sonde uses when they are not caught (KernelProbeSet). */
  __u64 fault[2] = {(__u64)ctx->runtime, (__u64)ctx->error_message};
  if (status == SONDE_BPF_ERROR_USER_STRING) {
    bpf_snprintf(out, sonde_cfg_str_cap, "user string copy fault %lld at 0x%llx [man error::fault]",
                 fault, sizeof fault);
    return;
  }
  if (status == SONDE_BPF_ERROR_KERNEL_STRING) {
    bpf_snprintf(out, sonde_cfg_str_cap,
                 "kernel string copy fault %lld at 0x%llx [man error::fault]", fault, sizeof fault);
    return;
  }
  if (status == SONDE_BPF_ERROR_READ) {
    bpf_snprintf(out, sonde_cfg_str_cap, "read fault [man error::fault] at 0x%llx", &fault[1],
                 sizeof fault[1]);
    return;
  }
  const char *text = status == SONDE_ERROR_DIVISION_BY_ZERO ? "division by 0"
                     : status == SONDE_ERROR_RANDINT_RANGE  ? "range too wide"
                     : status == SONDE_ERR_MAP_FULL         ? "Array overflow, check MAXMAPENTRIES"
                     : status == SONDE_BPF_ERROR_MAP_MEMORY ? SONDE_BPF_MAP_MEMORY_TEXT
                                                            : "error";
  sonde_bpf_strcpy(out, status == SONDE_BPF_ERROR_MESSAGE ? ctx->error_message : text,
                   sonde_cfg_str_cap);
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
  if (probeReadString(out, addr, cap, user) < 0)
    sonde_bpf_strcpy(out, fallback, sonde_cfg_str_cap);
}
void sonde_fn_user_string_2(sonde_context *ctx, char *out, int64_t addr, const char *err_msg,
                            uint32_t loc) {
  (void)ctx, (void)loc;
  readStringOr(out, addr, sonde_cfg_str_cap - 1, 1, err_msg);
}
void sonde_fn_user_string_n_3(sonde_context *ctx, char *out, int64_t addr, int64_t n,
                              const char *err_msg, uint32_t loc) {
  (void)ctx, (void)loc;
  readStringOr(out, addr, userCapOf(n), 1, err_msg);
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

/* ------------------------------------------------------------------ probe names */

/* Defined by BpfTarget for the script: probe `probe`'s pp() (which 0) or pn(). */
void sonde_bpf_probe_name(uint32_t probe, uint32_t which, char *out);

void sonde_fn_pp_0(sonde_context *ctx, char *out, uint32_t loc) {
  (void)loc;
  sonde_bpf_probe_name(ctx->probe_index, 0, out);
}
void sonde_fn_pn_0(sonde_context *ctx, char *out, uint32_t loc) {
  (void)loc;
  sonde_bpf_probe_name(ctx->probe_index, 1, out);
}
