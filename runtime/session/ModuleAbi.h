/* The contract between a compiled handler module and the runtime that loads it.
 *
 * `sonde` compiles a script into a shared object that exports one symbol,
 * `sonde_module` (a sonde_module_desc). The runtime (in `sonde` for begin/end/
 * error/timer probes, in the target's agent for markers) dlopen()s the module,
 * checks the ABI version and the layout fingerprint, and runs handlers through
 * the tables below. The module holds no LLVM and no C++ types: plain C data and
 * functions `void handler(sonde_context *)`.
 */
#ifndef SONDE_RUNTIME_SESSION_MODULE_ABI_H
#define SONDE_RUNTIME_SESSION_MODULE_ABI_H

#include "runtime/session/ContextAbi.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SONDE_MODULE_ABI_VERSION 6u
#define SONDE_MODULE_SYMBOL "sonde_module"

/* What kind of event runs a probe. */
enum sonde_probe_kind {
  SONDE_PROBE_BEGIN = 0,
  SONDE_PROBE_END = 1,
  SONDE_PROBE_ERROR = 2,
  SONDE_PROBE_TIMER = 3,  /* timer.s/ms/us/ns/hz/jiffies: period_ns, randomize_ns */
  SONDE_PROBE_MARKER = 4, /* process(...).mark(...) (issue 4) */
  SONDE_PROBE_PROCESS_BEGIN = 5,
  SONDE_PROBE_PROCESS_END = 6,
  SONDE_PROBE_THREAD_BEGIN = 7,
  SONDE_PROBE_THREAD_END = 8,
  SONDE_PROBE_KERNEL_TRACE = 9, /* kernel.trace(...): runs as BPF, no handler here */
};

typedef void (*sonde_handler_fn)(sonde_context *ctx);

typedef struct sonde_probe_desc {
  uint32_t kind; /* enum sonde_probe_kind */
  /* -t: layout index + 1 of the scalar stats global the handler adds its run
   * time (ns) to; 0 when compiled without -t. */
  uint32_t timing_global;
  int64_t sequence;     /* begin(N)/end(N)/error(N): run in ascending order */
  int64_t period_ns;    /* timers */
  int64_t randomize_ns; /* timers: each period adds uniform [-r, +r] */
  const char *pp;       /* pp(): the concrete probe point */
  const char *pn;       /* pn(): the point as the script spelled it */
  sonde_handler_fn handler;
  /* process("PATH").begin/end/thread.begin/thread.end: the absolute path of the
   * executable they are limited to; NULL for any process of the session. */
  const char *process_path;
  /* "FILE:LINE:COL" of the probe point, for the -t report. */
  const char *location;
} sonde_probe_desc;

/* Which vector state a 5-byte site's entry saves around the handler. sonde
 * decides it from the machine code around the site (compiler/codegen/
 * SiteVectorAnalysis.h): SSE when no wider state can be live there, the
 * argument registers when the code uses no vector register at all. */
enum sonde_vector_save {
  SONDE_VECTOR_SAVE_FULL = 0, /* registers 0-15 at the widest size the CPU has */
  SONDE_VECTOR_SAVE_SSE = 1,  /* xmm0-15 only */
  SONDE_VECTOR_SAVE_ARGS = 2, /* xmm0-7 only (arguments and results passing through) */
};

/* A stock 1-byte site's jump path (compiler/codegen/DisplacedCode.h): the
 * `length` bytes at the site, `original` in the file, become a jmp to a stub
 * that calls the handler, then runs `code`: the displaced instructions
 * relocated, and the jump back. The agent copies `code` into the stub and
 * applies the fixups (targets are link-time addresses: the load bias is added). */
enum sonde_code_fixup_kind {
  SONDE_FIXUP_REL32 = 1, /* int32 at offset = target - (code + end) */
  SONDE_FIXUP_ABS64 = 2, /* uint64 at offset = target */
};

typedef struct sonde_code_fixup {
  uint32_t offset; /* of the field in `code` */
  uint32_t kind;   /* enum sonde_code_fixup_kind */
  uint32_t end;    /* REL32: the offset the field is relative to */
  uint32_t reserved;
  uint64_t target; /* link-time address */
} sonde_code_fixup;

typedef struct sonde_displaced_code {
  uint32_t length;    /* bytes displaced at the site */
  uint32_t code_size; /* bytes of `code` */
  const uint8_t *original;
  const uint8_t *code;
  const sonde_code_fixup *fixups;
  /* boundary_count pairs {offset in the region, offset in `code`}: where a
   * thread found inside the region while it is patched continues. */
  const uint32_t *boundaries;
  uint32_t fixup_count;
  uint32_t boundary_count;
} sonde_displaced_code;

/* One marker site a probe was compiled for (process(...).mark(...)). The agent
 * finds `binary` among the objects the target has loaded (also later, through
 * dlopen), checks the NOP at `pc`, and attaches the site's probe there.
 * Handlers run with ctx->probe_data pointing at a sonde_marker_frame
 * (runtime/session/MarkerAbi.h). */
typedef struct sonde_marker_site {
  const char *binary; /* absolute path of the ELF object holding the marker */
  const char *provider;
  const char *name;
  uint64_t pc;          /* link-time address of the marker's NOP */
  uint64_t semaphore;   /* link-time address of its unsigned short semaphore; 0: none */
  uint32_t nop_size;    /* 5: sonde/sdt.h NOP; 1: sys/sdt.h NOP (jump path or trap) */
  uint32_t probe_index; /* the probe that runs here (sonde_module_desc::probes) */
  uint32_t vector_save; /* enum sonde_vector_save: what the 5-byte entry preserves */
  /* 1: the 5-byte entry leaves the frame's rbp and r12-r15 unwritten (the C
   * code it calls preserves them): no argument names them and no probe of
   * the module unwinds from the frame (SONDE_FRAME_UNWINDING_BUILTINS). */
  uint32_t lean_frame;
  /* Written by the agent before it enables the site: runtime address minus
   * link-time address of `binary`. Generated code adds it to the link-time
   * addresses of symbols an argument names ("8@counter(%rip)"). */
  uint64_t load_bias;
  /* A 1-byte site on the jump path; null: it traps (5-byte sites need none). */
  const sonde_displaced_code *displaced;
} sonde_marker_site;

/* A source token named by runtime errors: "operator '/' at app.probe:9:22". */
typedef struct sonde_location {
  const char *kind; /* "identifier", "operator", "keyword", ... */
  const char *text;
  const char *file;
  uint32_t line, column;
} sonde_location;

/* A global the end of the run prints because the script writes it but never
 * reads it (stap's automatic end-of-run display). */
typedef struct sonde_display_global {
  uint32_t layout_index; /* index into the layout's globals */
  uint32_t reserved;
} sonde_display_global;

typedef struct sonde_module_desc {
  uint32_t abi_version; /* SONDE_MODULE_ABI_VERSION */
  uint32_t probe_count;
  const sonde_probe_desc *probes;

  /* GlobalLayout::serialize() of the script's globals (includes the limits in
   * force and the CPU slot count), and its fingerprint. */
  const uint8_t *layout;
  uint64_t layout_size;
  uint64_t layout_fingerprint;

  /* printf formats, referenced by index from handlers, and where each is used
   * (the probe point, or "function NAME"; "" for sprintf): a binary trace's
   * event names. A format used in two places has two indexes. */
  uint32_t format_count;
  const char *const *formats;
  const char *const *format_sources;
  /* Per format: bit i set when printf argument i is gettimeofday_ns(). Handlers
   * leave those arguments 0; a record transport sends none of them (the
   * record's timestamp is the time), the text path reads the clock. */
  const uint64_t *format_time_args;

  uint32_t location_count;
  const sonde_location *locations;

  uint32_t display_count;
  const sonde_display_global *display;

  /* Handler limits baked in at compile time (language.md §7). */
  int64_t max_action;
  int64_t max_nesting;

  /* Sets the initial values of scalar globals (`global x = 5`, -G x=5) in a new
   * segment. sonde calls it once, with a context on that segment, after creating
   * the segment and before any begin probe; an agent attaching to an existing
   * segment never calls it. Takes no locks. NULL when no global has a value. */
  sonde_handler_fn init_globals;

  /* Marker sites, in probe order; writable (load_bias). */
  uint32_t marker_site_count;
  uint32_t reserved;
  sonde_marker_site *marker_sites;
} sonde_module_desc;

#ifdef __cplusplus
}
#endif

#endif /* SONDE_RUNTIME_SESSION_MODULE_ABI_H */
