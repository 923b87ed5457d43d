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
 * Vector state, sonde_agent_marker_entry (sonde_agent_xstate_mode, XState.cpp):
 * registers 0-15 at the widest size the CPU has: xmm (movdqa), ymm (vmovdqa)
 * or zmm (vmovdqa64), since libc's AVX2 routines end in vzeroupper, which
 * clears the upper halves of all of them. No XINUSE test (xgetbv costs more
 * than the stores it would save). The opmask registers and zmm16-31, which
 * glibc's EVEX routines use, are not saved: AVX-512 code keeping them live
 * across a marker is not protected.
 * sonde_agent_marker_entry_sse saves xmm0-15 only (legacy SSE moves leave the
 * upper halves alone), for sites where sonde found that nothing wider can be
 * live (compiler/codegen/SiteVectorAnalysis.h): a fraction of the stores.
 * sonde_agent_marker_entry_args saves xmm0-7, for sites in code that touches no
 * vector register: only arguments or results passing through can be live.
 *
 * Flags are neither saved nor restored: GCC and clang treat every x86 asm
 * statement, the marker's included, as clobbering them, and no `$argN` can name
 * them (pushfq and popfq are microcoded and slow).
 */
/* Saves vector registers 0-15 (or 0-7: count 8) of one width (`size` bytes
 * each, aligned) below the frame, calls the dispatch with the frame, restores
 * them. The area has room for 16 whatever the count: the handler's stack then
 * sits where it does for the SSE entry (measured: 128 bytes higher cost the
 * B1 path more than the 16 moves saved). */
        .macro  vector_call move, reg, size, count=16
        subq    $16*\size, %rsp
        andq    $-\size, %rsp
        .irp    r, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15
        .if     \r < \count
        \move   %\reg\r, \size*\r(%rsp)
        .endif
        .endr
        movq    %rbx, %rdi
        call    sonde_agent_stub_dispatch
        .irp    r, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15
        .if     \r < \count
        \move   \size*\r(%rsp), %\reg\r
        .endif
        .endr
        .endm

/* Pushes the general registers as a sonde_marker_frame; %rbx = the frame.
 * lean=1 leaves the rbp and r12-r15 slots unwritten: the C code called
 * preserves those registers, and sonde found that no probe reads them from
 * the frame (sonde_marker_site.lean_frame). */
        .macro  push_frame lean=0
        pushq   %rax
        leaq    16+128(%rsp), %rax      /* the marker's %rsp */
        pushq   %rax
        pushq   %rcx
        pushq   %rdx
        pushq   %rsi
        pushq   %rdi
        pushq   %r8
        pushq   %r9
        pushq   %r10
        pushq   %r11
        pushq   %rbx
        .if     \lean
        subq    $40, %rsp
        .else
        pushq   %rbp
        pushq   %r12
        pushq   %r13
        pushq   %r14
        pushq   %r15
        .endif
        movq    %rsp, %rbx              /* the frame; callee-saved across dispatch */
        cld
        .endm

/* Pops the frame pushed by push_frame and returns to the stub. */
        .macro  pop_frame lean=0
        movq    %rbx, %rsp
        .if     \lean
        addq    $40, %rsp
        .else
        popq    %r15
        popq    %r14
        popq    %r13
        popq    %r12
        popq    %rbp
        .endif
        popq    %rbx
        popq    %r11
        popq    %r10
        popq    %r9
        popq    %r8
        popq    %rdi
        popq    %rsi
        popq    %rdx
        popq    %rcx
        addq    $8, %rsp                /* the saved %rsp */
        popq    %rax
        ret
        .endm

        .text
        .globl  sonde_agent_marker_entry
        .hidden sonde_agent_marker_entry
        .type   sonde_agent_marker_entry, @function
        .p2align 4
sonde_agent_marker_entry:
        push_frame
        movzbl  sonde_agent_xstate_mode(%rip), %eax
        cmpl    $1, %eax
        je      .Lymm
        ja      .Lzmm
        vector_call movdqa, xmm, 16
        jmp     .Lrestore
.Lymm:
        vector_call vmovdqa, ymm, 32
        jmp     .Lrestore
.Lzmm:
        vector_call vmovdqa64, zmm, 64
.Lrestore:
        pop_frame
        .size   sonde_agent_marker_entry, .-sonde_agent_marker_entry

        .globl  sonde_agent_marker_entry_sse
        .hidden sonde_agent_marker_entry_sse
        .type   sonde_agent_marker_entry_sse, @function
        .p2align 4
sonde_agent_marker_entry_sse:
        push_frame
        vector_call movdqa, xmm, 16
        pop_frame
        .size   sonde_agent_marker_entry_sse, .-sonde_agent_marker_entry_sse

        .globl  sonde_agent_marker_entry_args
        .hidden sonde_agent_marker_entry_args
        .type   sonde_agent_marker_entry_args, @function
        .p2align 4
sonde_agent_marker_entry_args:
        push_frame
        vector_call movdqa, xmm, 16, 8
        pop_frame
        .size   sonde_agent_marker_entry_args, .-sonde_agent_marker_entry_args

/* The SSE and argument-register entries with lean frames. */
        .globl  sonde_agent_marker_entry_sse_lean
        .hidden sonde_agent_marker_entry_sse_lean
        .type   sonde_agent_marker_entry_sse_lean, @function
        .p2align 4
sonde_agent_marker_entry_sse_lean:
        push_frame 1
        vector_call movdqa, xmm, 16
        pop_frame 1
        .size   sonde_agent_marker_entry_sse_lean, .-sonde_agent_marker_entry_sse_lean

        .globl  sonde_agent_marker_entry_args_lean
        .hidden sonde_agent_marker_entry_args_lean
        .type   sonde_agent_marker_entry_args_lean, @function
        .p2align 4
sonde_agent_marker_entry_args_lean:
        push_frame 1
        vector_call movdqa, xmm, 16, 8
        pop_frame 1
        .size   sonde_agent_marker_entry_args_lean, .-sonde_agent_marker_entry_args_lean

        .section .note.GNU-stack, "", @progbits
