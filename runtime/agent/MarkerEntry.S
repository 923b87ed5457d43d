/* The common entry every 5-byte marker stub calls (see StubPool.cpp):
 *
 *   site:  jmp stub                     (patched over the 5-byte NOP)
 *   stub:  lea -0x80(%rsp),%rsp         step over the target's red zone
 *          call *entry                  -> here
 *          lea 0x80(%rsp),%rsp
 *          jmp site+5
 *
 * It pushes the registers so that the stack becomes a sonde_marker_frame
 * (runtime/session/MarkerAbi.h), saves the vector state the target may keep
 * live across the marker (the marker's asm declares no clobbers), and calls
 * sonde_agent_stub_dispatch(frame) on a 16-byte aligned stack. Matched call/ret,
 * so the return predicts.
 *
 * Vector state: SSE registers are saved with movdqa. When the upper halves of
 * ymm0-15 / zmm0-15 are in use (XINUSE, xgetbv with ecx=1), libc's AVX2 routines
 * (vzeroupper) would destroy them, so that case takes xsave/xrstor instead.
 * The opmask and zmm16-31 components do not choose the path: glibc's EVEX
 * string routines leave them in use in every process, so the slow path would
 * become the only one. Their live values are not preserved on the fast path
 * (AVX-512 code keeping k-registers or zmm16-31 live across a marker).
 */
        .text
        .globl  sonde_agent_marker_entry
        .hidden sonde_agent_marker_entry
        .type   sonde_agent_marker_entry, @function
        .p2align 4
sonde_agent_marker_entry:
        pushq   %rax
        leaq    16+128(%rsp), %rax      /* the marker's %rsp */
        pushq   %rax
        pushfq
        pushq   %rcx
        pushq   %rdx
        pushq   %rsi
        pushq   %rdi
        pushq   %r8
        pushq   %r9
        pushq   %r10
        pushq   %r11
        pushq   %rbx
        pushq   %rbp
        pushq   %r12
        pushq   %r13
        pushq   %r14
        pushq   %r15
        movq    %rsp, %rbx              /* the frame; callee-saved across dispatch */
        cld
        movzbl  sonde_agent_xstate_mode(%rip), %eax
        testl   %eax, %eax
        jz      .Lvector
        cmpl    $1, %eax
        jne     .Lxsave
        movl    $1, %ecx
        xgetbv                          /* XINUSE */
        testl   $0x44, %eax             /* AVX, ZMM_Hi256 (see above) */
        jnz     .Lxsave
.Lvector:
        subq    $256, %rsp
        andq    $-16, %rsp
        movdqa  %xmm0, 0(%rsp)
        movdqa  %xmm1, 16(%rsp)
        movdqa  %xmm2, 32(%rsp)
        movdqa  %xmm3, 48(%rsp)
        movdqa  %xmm4, 64(%rsp)
        movdqa  %xmm5, 80(%rsp)
        movdqa  %xmm6, 96(%rsp)
        movdqa  %xmm7, 112(%rsp)
        movdqa  %xmm8, 128(%rsp)
        movdqa  %xmm9, 144(%rsp)
        movdqa  %xmm10, 160(%rsp)
        movdqa  %xmm11, 176(%rsp)
        movdqa  %xmm12, 192(%rsp)
        movdqa  %xmm13, 208(%rsp)
        movdqa  %xmm14, 224(%rsp)
        movdqa  %xmm15, 240(%rsp)
        movq    %rbx, %rdi
        call    sonde_agent_stub_dispatch
        movdqa  0(%rsp), %xmm0
        movdqa  16(%rsp), %xmm1
        movdqa  32(%rsp), %xmm2
        movdqa  48(%rsp), %xmm3
        movdqa  64(%rsp), %xmm4
        movdqa  80(%rsp), %xmm5
        movdqa  96(%rsp), %xmm6
        movdqa  112(%rsp), %xmm7
        movdqa  128(%rsp), %xmm8
        movdqa  144(%rsp), %xmm9
        movdqa  160(%rsp), %xmm10
        movdqa  176(%rsp), %xmm11
        movdqa  192(%rsp), %xmm12
        movdqa  208(%rsp), %xmm13
        movdqa  224(%rsp), %xmm14
        movdqa  240(%rsp), %xmm15
        jmp     .Lrestore
.Lxsave:
        subq    sonde_agent_xsave_size(%rip), %rsp
        andq    $-64, %rsp
        xorl    %eax, %eax              /* xrstor requires a zeroed XSAVE header */
        movq    %rax, 512(%rsp)
        movq    %rax, 520(%rsp)
        movq    %rax, 528(%rsp)
        movq    %rax, 536(%rsp)
        movq    %rax, 544(%rsp)
        movq    %rax, 552(%rsp)
        movq    %rax, 560(%rsp)
        movq    %rax, 568(%rsp)
        movl    sonde_agent_xsave_mask(%rip), %eax
        xorl    %edx, %edx
        xsave   (%rsp)
        movq    %rbx, %rdi
        call    sonde_agent_stub_dispatch
        movl    sonde_agent_xsave_mask(%rip), %eax
        xorl    %edx, %edx
        xrstor  (%rsp)
.Lrestore:
        movq    %rbx, %rsp
        popq    %r15
        popq    %r14
        popq    %r13
        popq    %r12
        popq    %rbp
        popq    %rbx
        popq    %r11
        popq    %r10
        popq    %r9
        popq    %r8
        popq    %rdi
        popq    %rsi
        popq    %rdx
        popq    %rcx
        popfq
        addq    $8, %rsp                /* the saved %rsp */
        popq    %rax
        ret
        .size   sonde_agent_marker_entry, .-sonde_agent_marker_entry

        .section .note.GNU-stack, "", @progbits
