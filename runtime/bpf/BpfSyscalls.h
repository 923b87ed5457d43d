/* Part of the BPF runtime, included once by BpfRuntime.bpf.c after BpfTask.h
 * (not a standalone header): the dispatchers that run syscalls:* probes from
 * raw_syscalls:sys_enter and sys_exit (probes/tracepoint/SyscallDispatch.h). */

/* Where the running kernel keeps the current call's width (BTF offsets). */
extern const uint32_t sonde_cfg_task_thread_info;
extern const uint32_t sonde_cfg_thread_info_status;
/* arch/x86/include/asm/thread_info.h: a 32-bit system call is running. */
#define SONDE_TS_COMPAT 0x0002u

struct {
  __uint(type, BPF_MAP_TYPE_PROG_ARRAY);
  __uint(max_entries, SONDE_BPF_SYSCALL_SLOTS);
  __uint(key_size, 4);
  __uint(value_size, 4);
} sonde_syscall_enter_progs SEC(".maps"), sonde_syscall_exit_progs SEC(".maps");

/* The raw events' record: the call's id where the per-call events keep
 * __syscall_nr, the arguments or the return value where they keep theirs. */
#define SONDE_RAW_SYSCALL_ID_OFFSET 8

SONDE_INLINE int32_t sonde_bpf_syscall_dispatch(void *tracepoint, uint32_t exit) {
  int64_t id = *(const int64_t *)((const char *)tracepoint + SONDE_RAW_SYSCALL_ID_OFFSET);
  /* x32 calls carry a high bit and land past the slots; ia32 ones are another
   * numbering, which the per-call events ignore (trace_get_syscall_nr). */
  if (id < 0 || id >= SONDE_BPF_SYSCALL_SLOTS)
    return 0;
  if (readU32(currentTask() + sonde_cfg_task_thread_info, sonde_cfg_thread_info_status) &
      SONDE_TS_COMPAT)
    return 0;
  if (exit)
    bpf_tail_call(tracepoint, &sonde_syscall_exit_progs, (uint32_t)id);
  else
    bpf_tail_call(tracepoint, &sonde_syscall_enter_progs, (uint32_t)id);
  return 0;
}
