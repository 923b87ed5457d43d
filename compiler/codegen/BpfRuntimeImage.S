/* The BPF runtime bitcode (runtime/bpf/BpfRuntime.bpf.c), embedded as
 * sonde_bpf_runtime_bitcode[sonde_bpf_runtime_bitcode_size]. */
        .section .rodata
        .globl sonde_bpf_runtime_bitcode
        .globl sonde_bpf_runtime_bitcode_size
        .balign 16
sonde_bpf_runtime_bitcode:
        .incbin SONDE_BPF_RUNTIME_BITCODE
sonde_bpf_runtime_bitcode_end:
        .balign 8
sonde_bpf_runtime_bitcode_size:
        .quad sonde_bpf_runtime_bitcode_end - sonde_bpf_runtime_bitcode
        .section .note.GNU-stack,"",@progbits
