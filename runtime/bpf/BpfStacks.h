/* Part of the BPF runtime, included once by BpfRuntime.bpf.c (not a
 * standalone header): kernel stacks. The stack is captured at the handler's
 * entry (only for handlers that use it); backtrace() and callers() are hex,
 * print_backtrace() and print_stack() leave naming the addresses to sonde
 * (kallsyms), and the symbolized strings come from the kernel's own %pS,
 * which names an address as kallsyms does. */

_Static_assert(sizeof(sonde_context) <= SONDE_BPF_CONTEXT_CLEARED, "context area too small");

static SONDE_INLINE int64_t *stackDepth(sonde_context *ctx) {
  return (int64_t *)((char *)ctx + SONDE_BPF_STACK_OFFSET);
}
static SONDE_INLINE uint64_t *stackAddresses(sonde_context *ctx) {
  return (uint64_t *)((char *)ctx + SONDE_BPF_STACK_OFFSET + 8);
}

SONDE_INLINE void sonde_bpf_capture_stack(sonde_context *ctx, void *tracepoint) {
  long n = bpf_get_stack(tracepoint, stackAddresses(ctx), 8 * SONDE_BPF_MAX_BACKTRACE, 0);
  n = n > 0 ? n / 8 : 0;
  *stackDepth(ctx) = n < sonde_cfg_stack_frames ? n : sonde_cfg_stack_frames;
}

/* The first `count` frames as "0xADDR" each, separated by a space, with one
 * after the last too when `trailing` (backtrace()'s form); whole addresses only. */
static SONDE_INLINE void stackHex(sonde_context *ctx, char *out, int64_t count, int trailing) {
  int64_t depth = *stackDepth(ctx);
  const uint64_t *pcs = stackAddresses(ctx);
  out[0] = 0;
  uint32_t at = 0;
#pragma unroll
  for (uint32_t i = 0; i < SONDE_BPF_MAX_BACKTRACE; ++i) {
    if (i >= depth || i >= count)
      break;
    // "0x" + 16 digits + a space + the NUL must fit.
    if (at + 20 > sonde_cfg_str_cap)
      break;
    if (i > 0 && !trailing)
      out[at++] = ' ';
    out[at] = '0';
    out[at + 1] = 'x';
    appendHex(out, at + 2, pcs[i]);
    at += 18;
    if (trailing) {
      out[at++] = ' ';
      out[at] = 0;
    }
  }
}

void sonde_fn_backtrace_0(sonde_context *ctx, char *out, uint32_t loc) {
  (void)loc;
  stackHex(ctx, out, SONDE_BPF_MAX_BACKTRACE, 1);
}

/* callers(n): the first n + 1 frames, all of them for -1; past the end of the
 * stack stap's error. */
void sonde_fn_callers_1(sonde_context *ctx, char *out, int64_t n, uint32_t loc) {
  stackHex(ctx, out, n == -1 ? SONDE_BPF_MAX_BACKTRACE : n + 1, 0);
  if (n != -1 && n >= *stackDepth(ctx)) {
    sonde_raise(ctx, SONDE_BPF_ERROR_UNWIND, loc);
    ctx->runtime = (void *)n; /* the level, for the message */
  }
}

void sonde_fn_print_backtrace_0(sonde_context *ctx, uint32_t loc) {
  (void)loc;
  char *rec = recordArea((char *)ctx);
  sonde_bpf_record *r = (sonde_bpf_record *)rec;
  fillHeader(r, SONDE_BPF_RECORD_STACK, ctx->probe_index);
  int64_t depth = *stackDepth(ctx);
  *(int64_t *)(r + 1) = depth;
  const uint64_t *pcs = stackAddresses(ctx);
  uint64_t *to = (uint64_t *)((char *)(r + 1) + 8);
#pragma unroll
  for (uint32_t i = 0; i < SONDE_BPF_MAX_BACKTRACE; ++i)
    to[i] = pcs[i];
  uint32_t size = sizeof *r + 8 + 8 * SONDE_BPF_MAX_BACKTRACE;
  r->size = size;
  emit(rec, size);
}

/* A saved stack back to addresses, in the form backtrace() and callers() give
 * it: "0x" and 16 hex digits per frame, one space apart (fixed positions keep
 * the verifier's work small). Their count. */
static SONDE_INLINE int64_t parseStack(const char *stack, uint64_t *pcs) {
  int64_t depth = 0;
  for (uint32_t i = 0; i < SONDE_BPF_MAX_BACKTRACE; ++i) {
    uint32_t at = i * 19;
    if (at + 19 > sonde_cfg_str_cap || stack[at] != '0' || stack[at + 1] != 'x')
      break;
    uint64_t value = 0;
    uint32_t d = 0;
    for (; d < 16; ++d) {
      uint32_t v = (uint32_t)(unsigned char)stack[at + 2 + d] - '0';
      if (v > 9)
        v = ((uint32_t)(unsigned char)stack[at + 2 + d] | 0x20) - 'a' + 10;
      if (v > 15)
        break;
      value = value << 4 | v;
    }
    char after = stack[at + 18];
    if (d < 16 || (after != ' ' && after != 0))
      break;
    pcs[i] = value;
    depth = i + 1;
    if (!after)
      break;
  }
  return depth;
}

/* Room for the parsed addresses: past the captured stack in the context area,
 * which a begin/end probe never fills and a kernel one keeps. */
static SONDE_INLINE uint64_t *parsedStack(sonde_context *ctx) {
  return (uint64_t *)((char *)ctx + SONDE_BPF_PARSED_STACK_OFFSET);
}

/* print_stack(stk): sonde names the addresses, as it does in end probes. */
void sonde_fn_print_stack_1(sonde_context *ctx, const char *stack, uint32_t loc) {
  (void)loc;
  textRecord(ctx, SONDE_BPF_RECORD_PRINT_STACK, stack);
}

/* out[i], for an index the verifier has to see checked against the string. */
static SONDE_INLINE char charAt(const char *out, uint64_t i) {
  asm volatile("" : "+r"(i));
  return i < sonde_cfg_str_cap ? out[i] : 0;
}

/* One symbolized line in `line` (a string's room), as sonde's formatStack
 * words it: " 0xADDR : name+0xoff/0xsize [kernel]\n" (a module's [name] comes
 * from %pS itself). Unknown addresses: " 0xADDR\n" (full) or
 * " 0xADDR : 0xADDR\n" (saved). Its length, 0 when it does not fit. */
static SONDE_INLINE uint64_t symbolLine(char *line, uint64_t pc, uint32_t style) {
  __u64 args[1] = {pc};
  long n = bpf_snprintf(line, sonde_cfg_str_cap, " 0x%lx : ", args, sizeof args);
  if (n <= 1 || n > 24)
    return 0;
  /* The barriers keep the compiler from folding the checks into forms the
   * verifier cannot follow. */
  uint64_t symbol = (uint64_t)(n - 1);
  asm volatile("" : "+r"(symbol));
  if (symbol > 24)
    return 0;
  n = bpf_snprintf(line + symbol, sonde_cfg_str_cap - symbol, "%pS", args, sizeof args);
  if (n <= 1)
    return 0;
  uint64_t end = symbol + (uint64_t)(n - 1);
  asm volatile("" : "+r"(end));
  if (end >= sonde_cfg_str_cap - 1)
    return 0;
  /* %pS gives "0x..." for what kallsyms does not name. */
  int named = !(charAt(line, symbol) == '0' && charAt(line, symbol + 1) == 'x');
  if (!named && style == SONDE_BPF_STACK_FULL) {
    end = symbol - 3; /* drop " : 0x..." */
  } else if (named && charAt(line, end - 1) != ']') {
    asm volatile("" : "+r"(end));
    if (end >= sonde_cfg_str_cap - 10)
      return 0;
    __builtin_memcpy(line + end, " [kernel]", 9);
    end += 9;
  }
  asm volatile("" : "+r"(end));
  if (end >= sonde_cfg_str_cap - 2)
    return 0;
  line[end] = '\n';
  line[end + 1] = 0;
  return end + 1;
}

/* Whole lines only, as many as fit. Each line is built in the record area,
 * which no record uses while a handler evaluates an argument. */
static SONDE_INLINE void sprintStack(sonde_context *ctx, char *out, const uint64_t *pcs,
                                     int64_t depth, uint32_t style) {
  char *line = recordArea((char *)ctx);
  out[0] = 0;
  /* The length so far comes from the helpers' results, not from scanning
   * `out`: the verifier then sees ranges, which it can merge across frames. */
  uint64_t used = 0;
  for (uint32_t i = 0; i < SONDE_BPF_MAX_BACKTRACE; ++i) {
    if (i >= depth)
      break;
    uint64_t length = symbolLine(line, pcs[i], style);
    asm volatile("" : "+r"(used));
    if (!length || used >= sonde_cfg_str_cap - 1 || length >= sonde_cfg_str_cap - used)
      break;
    long copied = bpf_probe_read_kernel_str(out + used, sonde_cfg_str_cap - used, line);
    if (copied <= 1)
      break;
    used += (uint64_t)copied - 1;
  }
}

void sonde_fn_sprint_stack_1(sonde_context *ctx, char *out, const char *stack, uint32_t loc) {
  (void)loc;
  uint64_t *pcs = parsedStack(ctx);
  sprintStack(ctx, out, pcs, parseStack(stack, pcs), SONDE_BPF_STACK_SAVED);
}

void sonde_fn_sprint_backtrace_0(sonde_context *ctx, char *out, uint32_t loc) {
  (void)loc;
  sprintStack(ctx, out, stackAddresses(ctx), *stackDepth(ctx), SONDE_BPF_STACK_FULL);
}

/* symname(): "name" or "0xADDR"; symdata(): "name+0xoff/0xsize [kernel]". */
void sonde_fn_symname_1(sonde_context *ctx, char *out, int64_t addr, uint32_t loc) {
  (void)ctx, (void)loc;
  __u64 args[1] = {(__u64)addr};
  if (bpf_snprintf(out, sonde_cfg_str_cap, "%ps", args, sizeof args) <= 0)
    out[0] = 0;
}
void sonde_fn_symdata_1(sonde_context *ctx, char *out, int64_t addr, uint32_t loc) {
  (void)loc;
  /* The saved line less its " 0xADDR : " head and its newline. */
  char *line = recordArea((char *)ctx);
  uint64_t end = symbolLine(line, (uint64_t)addr, SONDE_BPF_STACK_SAVED);
  __u64 args[1] = {(__u64)addr};
  long head = bpf_snprintf(out, sonde_cfg_str_cap, " 0x%lx : ", args, sizeof args);
  asm volatile("" : "+r"(end));
  if (end == 0 || end > sonde_cfg_str_cap || head <= 1 || head > 24) {
    out[0] = 0;
    return;
  }
  line[end - 1] = 0;
  sonde_bpf_strcpy(out, line + head - 1, sonde_cfg_str_cap);
}
