/* Built-in functions (language.md §6) as generated code calls them.
 *
 * One rule for every built-in, so the code generator needs no per-function
 * knowledge beyond the signature in compiler/sema/Builtins.cpp:
 *
 *   RET sonde_fn_<name>_<argc>(sonde_context *ctx, [char *out,] ARGS..., uint32_t loc)
 *
 * - <argc> is the number of arguments of the call (tokenize_1 and tokenize_2).
 * - long results are returned as int64_t; string results are written to `out`
 *   (MAXSTRINGLEN bytes, NUL-terminated) and the function returns void; so do
 *   functions without a value.
 * - long arguments are int64_t, string arguments const char *.
 * - `loc` is the call's sonde_location, for the errors the function raises
 *   through ctx (sonde_raise*).
 *
 * A built-in the runtime does not provide is not exported; the compiler checks
 * with dlsym() in the sonde process (which links this runtime) and reports it.
 */
#ifndef SONDE_RUNTIME_SESSION_BUILTIN_ABI_H
#define SONDE_RUNTIME_SESSION_BUILTIN_ABI_H

#include "runtime/session/ContextAbi.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SONDE_BUILTIN_PREFIX "sonde_fn_"

/* ---- time ---- */
int64_t sonde_fn_gettimeofday_s_0(sonde_context *ctx, uint32_t loc);
int64_t sonde_fn_gettimeofday_ms_0(sonde_context *ctx, uint32_t loc);
int64_t sonde_fn_gettimeofday_us_0(sonde_context *ctx, uint32_t loc);
int64_t sonde_fn_gettimeofday_ns_0(sonde_context *ctx, uint32_t loc);
int64_t sonde_fn_local_clock_s_0(sonde_context *ctx, uint32_t loc);
int64_t sonde_fn_local_clock_ms_0(sonde_context *ctx, uint32_t loc);
int64_t sonde_fn_local_clock_us_0(sonde_context *ctx, uint32_t loc);
int64_t sonde_fn_local_clock_ns_0(sonde_context *ctx, uint32_t loc);
int64_t sonde_fn_ktime_get_ns_0(sonde_context *ctx, uint32_t loc);
int64_t sonde_fn_get_cycles_0(sonde_context *ctx, uint32_t loc);

/* ---- process context ---- */
int64_t sonde_fn_pid_0(sonde_context *ctx, uint32_t loc);
int64_t sonde_fn_tid_0(sonde_context *ctx, uint32_t loc);
int64_t sonde_fn_ppid_0(sonde_context *ctx, uint32_t loc);
int64_t sonde_fn_uid_0(sonde_context *ctx, uint32_t loc);
int64_t sonde_fn_euid_0(sonde_context *ctx, uint32_t loc);
int64_t sonde_fn_gid_0(sonde_context *ctx, uint32_t loc);
int64_t sonde_fn_egid_0(sonde_context *ctx, uint32_t loc);
int64_t sonde_fn_cpu_0(sonde_context *ctx, uint32_t loc);
int64_t sonde_fn_target_0(sonde_context *ctx, uint32_t loc);
int64_t sonde_fn_stp_pid_0(sonde_context *ctx, uint32_t loc);
void sonde_fn_execname_0(sonde_context *ctx, char *out, uint32_t loc);
void sonde_fn_pp_0(sonde_context *ctx, char *out, uint32_t loc);
void sonde_fn_pn_0(sonde_context *ctx, char *out, uint32_t loc);
void sonde_fn_probe_type_0(sonde_context *ctx, char *out, uint32_t loc);
void sonde_fn_cmdline_str_0(sonde_context *ctx, char *out, uint32_t loc);
void sonde_fn_env_var_1(sonde_context *ctx, char *out, const char *name, uint32_t loc);

/* ---- strings ---- */
int64_t sonde_fn_strlen_1(sonde_context *ctx, const char *s, uint32_t loc);
void sonde_fn_substr_3(sonde_context *ctx, char *out, const char *s, int64_t start, int64_t len,
                       uint32_t loc);
int64_t sonde_fn_stringat_2(sonde_context *ctx, const char *s, int64_t pos, uint32_t loc);
int64_t sonde_fn_isinstr_2(sonde_context *ctx, const char *s1, const char *s2, uint32_t loc);
int64_t sonde_fn_strpos_2(sonde_context *ctx, const char *s1, const char *s2, uint32_t loc);
void sonde_fn_str_replace_3(sonde_context *ctx, char *out, const char *s, const char *find,
                            const char *repl, uint32_t loc);
void sonde_fn_tokenize_1(sonde_context *ctx, char *out, const char *delim, uint32_t loc);
void sonde_fn_tokenize_2(sonde_context *ctx, char *out, const char *input, const char *delim,
                         uint32_t loc);
void sonde_fn_text_str_1(sonde_context *ctx, char *out, const char *s, uint32_t loc);
void sonde_fn_text_strn_3(sonde_context *ctx, char *out, const char *s, int64_t len, int64_t quoted,
                          uint32_t loc);
void sonde_fn_string_quoted_1(sonde_context *ctx, char *out, const char *s, uint32_t loc);
int64_t sonde_fn_strtol_2(sonde_context *ctx, const char *s, int64_t base, uint32_t loc);
int64_t sonde_fn_isdigit_1(sonde_context *ctx, const char *s, uint32_t loc);
void sonde_fn_errno_str_1(sonde_context *ctx, char *out, int64_t e, uint32_t loc);

/* ---- regular expressions: the last =~ match on this thread (RegexMatch.cpp) ---- */
void sonde_fn_matched_1(sonde_context *ctx, char *out, int64_t n, uint32_t loc);
void sonde_fn_matched_str_0(sonde_context *ctx, char *out, uint32_t loc);
int64_t sonde_fn_ngroups_0(sonde_context *ctx, uint32_t loc);

/* ---- numbers ---- */
int64_t sonde_fn_abs_1(sonde_context *ctx, int64_t x, uint32_t loc);
int64_t sonde_fn_min_2(sonde_context *ctx, int64_t a, int64_t b, uint32_t loc);
int64_t sonde_fn_max_2(sonde_context *ctx, int64_t a, int64_t b, uint32_t loc);
int64_t sonde_fn_randint_1(sonde_context *ctx, int64_t n, uint32_t loc);

/* ---- text, byte order (BuiltinsText.cpp) ---- */
void sonde_fn_ctime_0(sonde_context *ctx, char *out, uint32_t loc);
void sonde_fn_ctime_1(sonde_context *ctx, char *out, int64_t secs, uint32_t loc);
int64_t sonde_fn_htonl_1(sonde_context *ctx, int64_t x, uint32_t loc);
int64_t sonde_fn_htons_1(sonde_context *ctx, int64_t x, uint32_t loc);
int64_t sonde_fn_htonll_1(sonde_context *ctx, int64_t x, uint32_t loc);
int64_t sonde_fn_ntohl_1(sonde_context *ctx, int64_t x, uint32_t loc);
int64_t sonde_fn_ntohs_1(sonde_context *ctx, int64_t x, uint32_t loc);
int64_t sonde_fn_ntohll_1(sonde_context *ctx, int64_t x, uint32_t loc);

/* ---- the probed process's memory (BuiltinsUserMemory.cpp), as uconversions.stp ----
 * Read in place where the agent vouches for its fault handler, else with
 * process_vm_readv on this process (UserCopy.h): a bad address is an error (or the
 * err_msg / 0 / "0x..." fallback the function defines), never a fault. */
void sonde_fn_user_string_1(sonde_context *ctx, char *out, int64_t addr, uint32_t loc);
void sonde_fn_user_string_2(sonde_context *ctx, char *out, int64_t addr, const char *err_msg,
                            uint32_t loc);
void sonde_fn_user_string_n_2(sonde_context *ctx, char *out, int64_t addr, int64_t n, uint32_t loc);
void sonde_fn_user_string_n_3(sonde_context *ctx, char *out, int64_t addr, int64_t n,
                              const char *err_msg, uint32_t loc);
void sonde_fn_user_string_warn_1(sonde_context *ctx, char *out, int64_t addr, uint32_t loc);
void sonde_fn_user_string_warn_2(sonde_context *ctx, char *out, int64_t addr, const char *warn_msg,
                                 uint32_t loc);
void sonde_fn_user_string_quoted_1(sonde_context *ctx, char *out, int64_t addr, uint32_t loc);
void sonde_fn_user_string_n_quoted_2(sonde_context *ctx, char *out, int64_t addr, int64_t n,
                                     uint32_t loc);
/* inlen bytes at addr, NULs included, quoted and escaped into at most outlen bytes. */
void sonde_fn_user_buffer_quoted_3(sonde_context *ctx, char *out, int64_t addr, int64_t inlen,
                                   int64_t outlen, uint32_t loc);
/* user_TYPE(addr): 0 on a fault; user_TYPE_error(addr): raises "read fault". */
#define SONDE_USER_READ(type)                                                                      \
  int64_t sonde_fn_user_##type##_1(sonde_context *ctx, int64_t addr, uint32_t loc);                \
  int64_t sonde_fn_user_##type##_error_1(sonde_context *ctx, int64_t addr, uint32_t loc);
SONDE_USER_READ(char)
SONDE_USER_READ(short)
SONDE_USER_READ(ushort)
SONDE_USER_READ(int)
SONDE_USER_READ(long)
SONDE_USER_READ(ulong)
SONDE_USER_READ(int8)
SONDE_USER_READ(uint8)
SONDE_USER_READ(int16)
SONDE_USER_READ(uint16)
SONDE_USER_READ(int32)
SONDE_USER_READ(uint32)
SONDE_USER_READ(int64)
SONDE_USER_READ(uint64)
#undef SONDE_USER_READ

/* ---- control ---- */
/* abort(): ends the handler at once (uncatchable, unreported) and stops the session. */
void sonde_fn_abort_0(sonde_context *ctx, uint32_t loc);
int64_t sonde_fn_is_return_0(sonde_context *ctx, uint32_t loc);
void sonde_fn_exit_0(sonde_context *ctx, uint32_t loc);
void sonde_fn_error_1(sonde_context *ctx, const char *message, uint32_t loc);
void sonde_fn_warn_1(sonde_context *ctx, const char *message, uint32_t loc);
void sonde_fn_log_1(sonde_context *ctx, const char *message, uint32_t loc);
void sonde_fn_assert_1(sonde_context *ctx, int64_t cond, uint32_t loc);
void sonde_fn_assert_2(sonde_context *ctx, int64_t cond, const char *message, uint32_t loc);

/* ---- user stack and symbols (BuiltinsStack.cpp) ---- */
int64_t sonde_fn_uaddr_0(sonde_context *ctx, uint32_t loc);
void sonde_fn_probefunc_0(sonde_context *ctx, char *out, uint32_t loc);
void sonde_fn_ppfunc_0(sonde_context *ctx, char *out, uint32_t loc);
void sonde_fn_usymname_1(sonde_context *ctx, char *out, int64_t addr, uint32_t loc);
void sonde_fn_usymdata_1(sonde_context *ctx, char *out, int64_t addr, uint32_t loc);
void sonde_fn_umodname_1(sonde_context *ctx, char *out, int64_t addr, uint32_t loc);
void sonde_fn_usymfile_1(sonde_context *ctx, char *out, int64_t addr, uint32_t loc);
void sonde_fn_usymline_1(sonde_context *ctx, char *out, int64_t addr, uint32_t loc);
void sonde_fn_usymfileline_1(sonde_context *ctx, char *out, int64_t addr, uint32_t loc);
void sonde_fn_ubacktrace_0(sonde_context *ctx, char *out, uint32_t loc);
int64_t sonde_fn_ustack_1(sonde_context *ctx, int64_t n, uint32_t loc);
void sonde_fn_ucallers_1(sonde_context *ctx, char *out, int64_t n, uint32_t loc);
void sonde_fn_print_ubacktrace_0(sonde_context *ctx, uint32_t loc);
void sonde_fn_print_ubacktrace_brief_0(sonde_context *ctx, uint32_t loc);
void sonde_fn_sprint_ubacktrace_0(sonde_context *ctx, char *out, uint32_t loc);
void sonde_fn_print_ustack_1(sonde_context *ctx, const char *stack, uint32_t loc);
void sonde_fn_sprint_ustack_1(sonde_context *ctx, char *out, const char *stack, uint32_t loc);

/* ---- kernel symbols, in sonde (BuiltinsKernelSymbols.cpp) ---- */
void sonde_fn_symname_1(sonde_context *ctx, char *out, int64_t addr, uint32_t loc);
void sonde_fn_symdata_1(sonde_context *ctx, char *out, int64_t addr, uint32_t loc);
void sonde_fn_print_stack_1(sonde_context *ctx, const char *stack, uint32_t loc);
void sonde_fn_sprint_stack_1(sonde_context *ctx, char *out, const char *stack, uint32_t loc);

/* ---- the process, clocks per CPU, the time zone (BuiltinsProcess.cpp) ---- */
int64_t sonde_fn_pgrp_0(sonde_context *ctx, uint32_t loc);
int64_t sonde_fn_sid_0(sonde_context *ctx, uint32_t loc);
int64_t sonde_fn_ns_pid_0(sonde_context *ctx, uint32_t loc);
int64_t sonde_fn_ns_tid_0(sonde_context *ctx, uint32_t loc);
int64_t sonde_fn_ns_ppid_0(sonde_context *ctx, uint32_t loc);
int64_t sonde_fn_ns_pgrp_0(sonde_context *ctx, uint32_t loc);
int64_t sonde_fn_ns_sid_0(sonde_context *ctx, uint32_t loc);
int64_t sonde_fn_ns_uid_0(sonde_context *ctx, uint32_t loc);
int64_t sonde_fn_ns_euid_0(sonde_context *ctx, uint32_t loc);
int64_t sonde_fn_ns_gid_0(sonde_context *ctx, uint32_t loc);
int64_t sonde_fn_ns_egid_0(sonde_context *ctx, uint32_t loc);
void sonde_fn_pexecname_0(sonde_context *ctx, char *out, uint32_t loc);
void sonde_fn_pid2execname_1(sonde_context *ctx, char *out, int64_t pid, uint32_t loc);
int64_t sonde_fn_user_mode_0(sonde_context *ctx, uint32_t loc);
int64_t sonde_fn_is_myproc_0(sonde_context *ctx, uint32_t loc);
void sonde_fn_cmdline_arg_1(sonde_context *ctx, char *out, int64_t n, uint32_t loc);
void sonde_fn_cmdline_args_3(sonde_context *ctx, char *out, int64_t n, int64_t m, const char *delim,
                             uint32_t loc);
int64_t sonde_fn_cpu_clock_s_1(sonde_context *ctx, int64_t cpu, uint32_t loc);
int64_t sonde_fn_cpu_clock_ms_1(sonde_context *ctx, int64_t cpu, uint32_t loc);
int64_t sonde_fn_cpu_clock_us_1(sonde_context *ctx, int64_t cpu, uint32_t loc);
int64_t sonde_fn_cpu_clock_ns_1(sonde_context *ctx, int64_t cpu, uint32_t loc);
int64_t sonde_fn_tz_gmtoff_0(sonde_context *ctx, uint32_t loc);
void sonde_fn_tz_name_0(sonde_context *ctx, char *out, uint32_t loc);
void sonde_fn_tz_ctime_1(sonde_context *ctx, char *out, int64_t secs, uint32_t loc);

/* ---- requests only the sonde process carries out (BuiltinsRequests.cpp) ---- */
/* system(cmd): sh -c cmd, started by sonde after the handler, in the background. */
void sonde_fn_system_1(sonde_context *ctx, const char *command, uint32_t loc);
/* switch_file(): the output file moves on (-S: the next part; -o FILE: FILE.1, ...). */
void sonde_fn_switch_file_0(sonde_context *ctx, uint32_t loc);

#ifdef __cplusplus
}
#endif

#endif /* SONDE_RUNTIME_SESSION_BUILTIN_ABI_H */
