/* What a marker's handler sees of the target thread at the marker: the frame the
 * agent's trampoline (or its trap handler) saves, which ctx->probe_data points at
 * while a marker probe runs. Generated code reads `$argN` from it with the
 * offsets below, so the layout is part of the module ABI.
 *
 * The trampoline pushes the registers in the reverse of this order, so the
 * struct is the stack as the trampoline leaves it; the trap path fills one from
 * the signal's ucontext.
 */
#ifndef SONDE_RUNTIME_SESSION_MARKER_ABI_H
#define SONDE_RUNTIME_SESSION_MARKER_ABI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sonde_marker_frame {
  uint64_t r15, r14, r13, r12, rbp, rbx, r11, r10, r9, r8, rdi, rsi, rdx, rcx;
  uint64_t rsp; /* at the marker */
  uint64_t rax;
  /* Trampoline: the return address into the site's stub. Trap path: the
   * marker's address. */
  uint64_t return_address;
} sonde_marker_frame;

/* The built-ins that unwind the target's stack from a marker frame
 * (BuiltinsStack.cpp): they need all of its registers, so a module calling any
 * of them gets full frames at every site (sonde_marker_site.lean_frame). */
#define SONDE_FRAME_UNWINDING_BUILTINS                                                             \
  "sonde_fn_ubacktrace_0", "sonde_fn_ustack_1", "sonde_fn_ucallers_1",                             \
      "sonde_fn_print_ubacktrace_0", "sonde_fn_print_ubacktrace_brief_0",                          \
      "sonde_fn_sprint_ubacktrace_0"

#ifdef __cplusplus
}
#endif

#endif /* SONDE_RUNTIME_SESSION_MARKER_ABI_H */
