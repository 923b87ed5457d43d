/* Stock sys/sdt.h sites in hand-written code, one function per way a site's
 * displaced instructions are relocated (and two the jump path refuses), for
 * DisplacedSitesTest. Each function takes x (%rdi), fires
 * displaced:NAME(x) and returns a value e2e_displaced.c checks. */
#include <sys/sdt.h>

#define FUNCTION(name) \
        .globl name; .type name, @function; .p2align 4, 0xcc; name: .cfi_startproc
#define END(name) .cfi_endproc; .size name, .-name

        .data
        .globl d_data, d_acc
d_data: .quad 1000
d_acc:  .quad 0

        .text
/* Copies: nop; mov %rdi,%rax; add $1,%rax.  x + 1 */
FUNCTION(d_copy)
        STAP_PROBE1(displaced, copy, -8@%rdi)
        mov %rdi, %rax
        add $1, %rax
        ret
END(d_copy)

/* A rip-relative load.  x + 1000 */
FUNCTION(d_rip_load)
        STAP_PROBE1(displaced, rip_load, -8@%rdi)
        mov d_data(%rip), %rax
        add %rdi, %rax
        ret
END(d_rip_load)

/* A rip-relative read-modify-write.  the running sum of x */
FUNCTION(d_rip_add)
        STAP_PROBE1(displaced, rip_add, -8@%rdi)
        add %rdi, d_acc(%rip)
        mov d_acc(%rip), %rax
        ret
END(d_rip_add)

/* A jcc rel8 (widened), taken or not.  1 if x > 0, else -1 */
FUNCTION(d_jcc)
        STAP_PROBE1(displaced, jcc, -8@%rdi)
        test %rdi, %rdi
        jle 1f
        mov $1, %eax
        ret
1:      mov $-1, %rax
        ret
END(d_jcc)

/* A jcc rel32.  x * 2 if x > 100, else x */
FUNCTION(d_jcc_near)
        STAP_PROBE1(displaced, jcc_near, -8@%rdi)
        mov %rdi, %rax
        cmp $100, %rdi
        .byte 0x0f, 0x8f        /* jg rel32 */
        .long 1f - . - 4
        ret
        .fill 64, 1, 0x90
1:      add %rax, %rax
        ret
END(d_jcc_near)

/* A jmp rel32 ends the region.  x + 5 */
FUNCTION(d_jmp)
        STAP_PROBE1(displaced, jmp, -8@%rdi)
        .byte 0xe9
        .long 1f - . - 4
        nop
        nop
1:      lea 5(%rdi), %rax
        ret
END(d_jmp)

/* The site just before the ret at the function's end: the region runs on
 * into the padding after it.  x + 2 */
FUNCTION(d_ret)
        lea 2(%rdi), %rax
        STAP_PROBE1(displaced, ret, -8@%rdi)
        ret
END(d_ret)

/* A call completes the region: its callee must see the original return
 * address (d_call_helper checks it).  x + 11 */
FUNCTION(d_call)
        STAP_PROBE1(displaced, call, -8@%rdi)
        call d_call_helper
.Lcall_return:
        add $1, %rax
        ret
END(d_call)

FUNCTION(d_call_helper)
        lea 10(%rdi), %rax
        lea .Lcall_return(%rip), %rcx
        cmp %rcx, (%rsp)
        je 1f
        mov $-999999, %rax      /* called from somewhere else */
1:      ret
END(d_call_helper)

/* Refused: a loop branches into the region.  x + 3 */
FUNCTION(d_branch_in)
        mov $3, %ecx
        STAP_PROBE1(displaced, branch_in, -8@%rdi)
        mov %rdi, %rax
1:      add $1, %rax
        dec %ecx
        jnz 1b
        ret
END(d_branch_in)

/* Refused: an indirect jump the analysis cannot read.  x + 7 */
FUNCTION(d_indirect)
        STAP_PROBE1(displaced, indirect, -8@%rdi)
        mov %rdi, %rax
        add $7, %rax
        lea 1f(%rip), %rcx
        jmp *%rcx
1:      ret
END(d_indirect)

        .section .note.GNU-stack, "", @progbits
