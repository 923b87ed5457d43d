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
#include <linux/errno.h>

#include "runtime/bpf/BpfAbi.h"
#include "runtime/bpf/KernelStatBlock.h"
#include "runtime/session/BuiltinAbi.h"
#include "runtime/strings/ShortEscape.h"
#include "runtime/values/ValueAbi.h"

#define SONDE_INLINE __attribute__((always_inline))

/* Set by BpfTarget for the script being compiled. */
extern const uint32_t sonde_cfg_str_cap;       /* MAXSTRINGLEN */
extern const uint32_t sonde_cfg_stack_frames;  /* MAXBACKTRACE, at most SONDE_BPF_MAX_BACKTRACE */
extern const uint32_t sonde_cfg_str_column;    /* a string key column: MAXSTRINGLEN, 8-aligned */
extern const uint32_t sonde_cfg_key_bytes;     /* the array/aggregate key, id included */
extern const uint32_t sonde_cfg_value_bytes;   /* an array value, also the aggregate block */
extern const uint32_t sonde_cfg_record_offset; /* where the record is built */
extern const uint32_t sonde_cfg_record_bytes;  /* the largest record */
extern const uint32_t sonde_cfg_record_mask;   /* bit_ceil(record bytes) - 1 */
/* CONFIG_HZ of the running kernel (HZ()). */
extern const uint32_t sonde_cfg_hz;
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

/* The parts, in this order: each uses what the ones before define. */
#include "runtime/bpf/BpfContext.h"

#include "runtime/bpf/BpfValues.h"

#include "runtime/bpf/BpfOutput.h"

#include "runtime/bpf/BpfBuiltins.h"

#include "runtime/bpf/BpfStrings.h"

#include "runtime/bpf/BpfTask.h"

#include "runtime/bpf/BpfSyscalls.h"

#include "runtime/bpf/BpfStacks.h"

#include "runtime/bpf/BpfTime.h"

char LICENSE[] SEC("license") = "GPL";
