/* What kernel-probe code (BPF, compiler/codegen/BpfTarget) shares with sonde,
 * which loads it and drains its output (probes/tracepoint/KernelProbeSet).
 *
 * State:
 *  - scalar globals live in the `.bss` global `sonde_globals` after its
 *    sonde_bpf_control head, at the offsets KernelStateShape gives (the
 *    compiler and sonde derive them from the GlobalLayout the same way);
 *  - array globals are entries of one hash map `sonde_arrays`, keyed by the
 *    global's layout index and its key columns (longs 8 bytes, strings
 *    MAXSTRINGLEN bytes, zero padded); stats, scalar or array, are entries of
 *    one per-CPU hash map `sonde_aggregates` holding stap's accumulator block.
 *  - one per-CPU array `sonde_scratch` holds the sonde_context, the key being
 *    built, the record being written and every string buffer of a handler.
 * Output: records in the ring buffer `sonde_events`.
 */
#ifndef SONDE_RUNTIME_BPF_BPF_ABI_H
#define SONDE_RUNTIME_BPF_BPF_ABI_H

#include "runtime/session/ContextAbi.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What a kernel probe's code knows of one array or stats global: the address
 * generated code passes as `sonde_map *` / `sonde_stats *` points at this. */
typedef struct sonde_bpf_global {
  uint32_t id;          /* layout index: the first key word */
  uint32_t key_count;   /* 0 for scalar stats */
  uint32_t string_keys; /* bit c: column c is a string */
  uint32_t value_kind;  /* values::ValueKind: 0 long, 1 string, 2 stats */
  uint32_t hist_kind;   /* enum sonde_stat_hist_kind */
  uint32_t buckets;     /* histogram buckets (0 without) */
  int64_t hist_low, hist_width;
  uint32_t variance_shift; /* @variance(x, N): N */
  uint32_t uses_variance;  /* @variance is read somewhere: keep stap's Welford terms */
} sonde_bpf_global;

/* Scratch layout: the context, the key being built, a value (KernelStateShape
 * sizes), the handlers' string buffers, then the record being written (and the
 * string built-ins' work area, below, in scripts that call one). The
 * `.rodata` array `sonde_kernel_info` gives the whole size, the record's, the
 * number of globals kernel probes use and their layout indexes (int64 each).
 * The context area is the sonde_context (cleared at each handler's start),
 * then the kernel stack of handlers that use one: a depth (int64) and up to
 * SONDE_BPF_MAX_BACKTRACE addresses, captured at entry. */
#define SONDE_BPF_CONTEXT_CLEARED 128u
#define SONDE_BPF_MAX_BACKTRACE 20u /* the most frames MAXBACKTRACE keeps in the kernel */
#define SONDE_BPF_STACK_OFFSET SONDE_BPF_CONTEXT_CLEARED
/* sprint_stack() parses its string into room of the same size. */
#define SONDE_BPF_PARSED_STACK_OFFSET (SONDE_BPF_STACK_OFFSET + 8u + 8u * SONDE_BPF_MAX_BACKTRACE)
#define SONDE_BPF_CONTEXT_BYTES (SONDE_BPF_PARSED_STACK_OFFSET + 8u * SONDE_BPF_MAX_BACKTRACE)
/* The largest per-CPU map value, so the largest scratch (PCPU_MIN_UNIT_SIZE). */
#define SONDE_BPF_MAX_SCRATCH_BYTES 32768u
/* The string built-ins' work area (BpfStrings.h), at the end of scratch when a
 * script calls one: five string slots of a string key column each, then the
 * state of their loops. */
#define SONDE_BPF_STRING_WORK_STATE 128u
#define SONDE_BPF_STRING_WORK_BYTES(column) (5u * (column) + SONDE_BPF_STRING_WORK_STATE)

/* The head of the `.bss` global `sonde_globals`: what sonde sets before the
 * programs load and reads while they run. The script's scalars follow it. */
typedef struct sonde_bpf_control {
  int64_t target_pid;         /* target() */
  int64_t realtime_offset_ns; /* CLOCK_REALTIME - CLOCK_MONOTONIC at load */
  uint64_t lost_records;      /* records the full ring buffer refused */
  uint32_t running;           /* non-zero while handlers may start */
  uint32_t max_errors;        /* MAXERRORS: the handlers stop themselves past it */
  uint64_t errors;            /* errors raised by the handlers */
  int64_t consumer_pid;       /* stp_pid(): the sonde process */
  int64_t consumer_uid;       /* is_myproc(): sonde's real uid */
  /* The time zone sonde captured at startup (SessionFacts): tz_gmtoff(),
   * tz_name(), tz_ctime(). */
  int64_t tz_seconds_west;
  char tz_name[32];
  int64_t cpus; /* cpu_clock_*(cpu) reads CPUs 0 .. cpus-1 (sysconf(_SC_NPROCESSORS_CONF)) */
  uint64_t pad[3];
} sonde_bpf_control;
#define SONDE_BPF_CONTROL_BYTES 128u

/* Record kinds in sonde_events. */
enum sonde_bpf_record_kind {
  SONDE_BPF_RECORD_PRINTF = 1,      /* format id, then the arguments */
  SONDE_BPF_RECORD_ERROR = 2,       /* a handler ended with ctx->error set */
  SONDE_BPF_RECORD_EXIT = 3,        /* exit() */
  SONDE_BPF_RECORD_WARN = 4,        /* warn(text): the text as a string (u16 length, bytes) */
  SONDE_BPF_RECORD_LOG = 5,         /* log(text): likewise */
  SONDE_BPF_RECORD_STACK = 6,       /* print_backtrace(): a depth (uint64), the addresses */
  SONDE_BPF_RECORD_SYSTEM = 7,      /* system(command): the command as a string, as warn's */
  SONDE_BPF_RECORD_SWITCH_FILE = 8, /* switch_file() */
  SONDE_BPF_RECORD_PRINT_STACK = 9, /* print_stack(stk): stk as a string */
};

/* How a symbolized kernel stack names an address it cannot name
 * (symbols::SymbolStyle): " 0xADDR" or " 0xADDR : 0xADDR". */
enum sonde_bpf_stack_style {
  SONDE_BPF_STACK_FULL = 0,  /* sprint_backtrace() */
  SONDE_BPF_STACK_SAVED = 1, /* sprint_stack(stk), symdata() */
};

/* Every record starts with this header. */
typedef struct sonde_bpf_record {
  uint32_t kind; /* enum sonde_bpf_record_kind */
  uint32_t id;   /* printf: format id; error: probe index */
  uint32_t pid, tid;
  uint64_t time_ns; /* bpf_ktime_get_ns() */
  uint32_t cpu;
  uint32_t size;        /* bytes of the whole record */
  uint64_t string_mask; /* printf: bit i set if argument i is a string */
} sonde_bpf_record;

/* A printf record's arguments follow the header in order: a long as 8 bytes;
 * a string as a uint16_t length (without NUL) and its bytes, the next argument
 * starting 8-byte aligned. */

/* An error record's body. */
typedef struct sonde_bpf_error {
  int32_t status;    /* sonde_status or sonde_error_code */
  uint32_t location; /* sonde_location index */
  uint64_t detail;   /* the faulting address of a string copy, else 0 */
  int64_t rc;        /* the failing helper's return code, else 0 */
} sonde_bpf_error;

/* Error codes only kernel probes raise (beyond ContextAbi.h's). */
enum sonde_bpf_error_code {
  SONDE_BPF_ERROR_KERNEL_STRING = 200, /* "kernel string copy fault at 0x..." */
  SONDE_BPF_ERROR_USER_STRING = 201,   /* "user string copy fault at 0x..." */
  SONDE_BPF_ERROR_READ = 202,          /* "read fault [man error::fault] at 0x..." */
  SONDE_BPF_ERROR_MESSAGE = 203,       /* error(text), assert(): the text follows the error */
  SONDE_BPF_ERROR_UNWIND = 204,        /* "reached end of stack before unwinding to level" rc */
  SONDE_BPF_ERROR_MAP_MEMORY = 205,    /* a new element refused, the map not full */
};

/* Programs of syscalls:sys_enter_NAME / sys_exit_NAME probes that the
 * dispatcher on raw_syscalls:sys_enter / sys_exit tail-calls, by x86-64 call
 * number (probes/tracepoint/SyscallDispatch.h): the prog-array maps, their size,
 * and the `.rodata` array `sonde_syscall_slots` the compiler leaves for the
 * loader, a (probe index, direction 0 enter / 1 exit, call number) uint32
 * triple per dispatched program. */
#define SONDE_BPF_SYSCALL_SLOTS 1024u
#define SONDE_BPF_SYSCALL_ENTER_MAP "sonde_syscall_enter_progs"
#define SONDE_BPF_SYSCALL_EXIT_MAP "sonde_syscall_exit_progs"

/* The text of SONDE_BPF_ERROR_MAP_MEMORY: the kernel refused the element for
 * want of memory (it can, inserting at scheduler events with interrupts off)
 * or because the map was busy on this CPU; MAXMAPENTRIES was not reached. */
#define SONDE_BPF_MAP_MEMORY_TEXT                                                                  \
  "the kernel could not add an array element (out of memory, or the map was busy)"

/* ---- entry points only kernel-probe code calls ---- */

/* The handler's context in scratch (NULL if scratch is missing), and after the
 * handler: its error, if any, as a record. */
sonde_context *sonde_bpf_enter(void *tracepoint, uint32_t probe, int64_t actions);
void sonde_bpf_leave(sonde_context *ctx);
/* Right after sonde_bpf_enter, for handlers that read the kernel stack: the
 * stack at the tracepoint (bpf_get_stack needs the program's own context). */
void sonde_bpf_capture_stack(sonde_context *ctx, void *tracepoint);
/* The body of a dispatcher program (`exit`: on sys_exit): runs the program of
 * the record's call number, if any; skips 32-bit calls, as the per-call events do. */
int32_t sonde_bpf_syscall_dispatch(void *tracepoint, uint32_t exit);
/* Strings in kernel memory (scratch, .rodata, the tracepoint record). */
void sonde_bpf_strcpy(char *dst, const char *src, uint32_t cap);
void sonde_bpf_strcat(char *dst, const char *src, uint32_t cap);
int32_t sonde_bpf_strcmp(const char *a, const char *b, uint32_t cap);
/* $field: an integer of `size` bytes at `offset` of the tracepoint record, or a
 * string: char[length] there, or (length 0) a __data_loc / (rel) __rel_loc one. */
int64_t sonde_bpf_field_long(sonde_context *ctx, uint32_t offset, uint32_t size, int32_t isSigned);
void sonde_bpf_field_string(sonde_context *ctx, char *out, uint32_t offset, uint32_t length,
                            int32_t rel);
/* A tracepoint's C arguments (raw tracepoint programs: sonde_bpf_field_long
 * reads args[i] at offset 8 * i), then kernel memory they point to: `size`
 * bytes at addr as an integer, or a char[length] there as a string. A fault
 * raises stap's read fault. */
int64_t sonde_bpf_kernel_value(sonde_context *ctx, int64_t addr, uint32_t size, int32_t isSigned,
                               uint32_t loc);
void sonde_bpf_kernel_chars(sonde_context *ctx, char *out, int64_t addr, uint32_t length,
                            uint32_t loc);
/* printf(format #fmt, args[count]) as a record; bit i of string_mask: a string. */
void sonde_bpf_printf(sonde_context *ctx, uint32_t fmt, const SondeFormatArg *args, uint32_t count,
                      uint64_t stringMask);
/* sprintf: appends to `out` (MAXSTRINGLEN) what the kernel's bpf_snprintf
 * makes of `format` (in .rodata) and args (u64 each, strings as pointers). */
void sonde_bpf_sprintf(char *out, const char *format, const uint64_t *args, uint32_t bytes);

#ifdef __cplusplus
}
#endif

#endif /* SONDE_RUNTIME_BPF_BPF_ABI_H */
