/* Part of the BPF runtime, included once by BpfRuntime.bpf.c (not a
 * standalone header): kernel stacks. The stack is captured at the handler's
 * entry (only for handlers that use it); the string forms are hex, and
 * print_backtrace() sends the addresses for sonde to symbolize (kallsyms). */

_Static_assert(sizeof(sonde_context) <= SONDE_BPF_CONTEXT_CLEARED, "context area too small");

static SONDE_INLINE int64_t *stackDepth(sonde_context *ctx) {
  return (int64_t *)((char *)ctx + SONDE_BPF_STACK_OFFSET);
}
static SONDE_INLINE uint64_t *stackAddresses(sonde_context *ctx) {
  return (uint64_t *)((char *)ctx + SONDE_BPF_STACK_OFFSET + 8);
}

SONDE_INLINE void sonde_bpf_capture_stack(sonde_context *ctx, void *tracepoint) {
  long n = bpf_get_stack(tracepoint, stackAddresses(ctx), 8 * SONDE_BPF_MAX_BACKTRACE, 0);
  *stackDepth(ctx) = n > 0 ? n / 8 : 0;
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
  uint64_t *to = (uint64_t *)((char *)(r + 1) + 8);
  const uint64_t *pcs = stackAddresses(ctx);
#pragma unroll
  for (uint32_t i = 0; i < SONDE_BPF_MAX_BACKTRACE; ++i)
    to[i] = pcs[i];
  uint32_t size = sizeof *r + 8 + 8 * SONDE_BPF_MAX_BACKTRACE;
  r->size = size;
  emit(rec, size);
}
