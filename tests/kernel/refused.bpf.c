/* BpfObjectTest's fixture the verifier must refuse: it reads far past its
 * tracepoint context. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

long long sink = 0;

SEC("tracepoint/syscalls/sys_enter_close")
int read_too_far(void *ctx) {
  sink = *(long long *)((char *)ctx + 100000);
  return 0;
}

char LICENSE[] SEC("license") = "GPL";
