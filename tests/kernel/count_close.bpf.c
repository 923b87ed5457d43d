/* BpfObjectTest's fixture: counts close() calls of one process (the pid is set
 * in .rodata before loading) and remembers the last fd it passed. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

/* syscalls:sys_enter_close's format: the common fields, __syscall_nr, fd. */
struct sys_enter_close {
  unsigned long long common;
  int syscall_nr;
  int pad;
  unsigned long long fd;
};

volatile const int target_pid = 0;
unsigned long long closes = 0;
long long last_fd = 0;

SEC("tracepoint/syscalls/sys_enter_close")
int count_close(struct sys_enter_close *ctx) {
  if ((int)(bpf_get_current_pid_tgid() >> 32) != target_pid)
    return 0;
  __sync_fetch_and_add(&closes, 1);
  last_fd = (long long)ctx->fd;
  return 0;
}

char LICENSE[] SEC("license") = "GPL";
