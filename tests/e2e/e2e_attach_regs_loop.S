/* e2e_attach_regs's main loop: every general register but rax and rsp, xmm0-14,
 * the upper halves of ymm0-7 and MXCSR hold known values, checked on every
 * turn until `regs_stop` is set. A thread borrowed to load the agent must get
 * all of them back. Returns 0, or the number of the first check that failed. */
  .text
  .globl regs_check_loop
  .type regs_check_loop, @function
regs_check_loop:
  push %rbx
  push %rbp
  push %r12
  push %r13
  push %r14
  push %r15
  sub $8, %rsp
  stmxcsr (%rsp)
  ldmxcsr mxcsr_value(%rip)
  mov $0x11111111, %rbx
  mov $0x22222222, %rcx
  mov $0x33333333, %rdx
  mov $0x44444444, %rsi
  mov $0x55555555, %rdi
  mov $0x66666666, %rbp
  mov $0x08080808, %r8
  mov $0x09090909, %r9
  mov $0x10101010, %r10
  mov $0x11011011, %r11
  mov $0x12121212, %r12
  mov $0x13131313, %r13
  mov $0x14141414, %r14
  mov $0x15151515, %r15
  .irp n, 0,1,2,3,4,5,6,7
  vmovdqu vector_values+32*\n(%rip), %ymm\n
  .endr
  .irp n, 8,9,10,11,12,13,14
  vmovdqu vector_values+32*\n(%rip), %xmm\n
  .endr
1:
  cmpl $0, regs_stop(%rip)
  jne 3f
  mov $1, %eax
  cmp $0x11111111, %rbx
  jne 2f
  cmp $0x22222222, %rcx
  jne 2f
  cmp $0x33333333, %rdx
  jne 2f
  cmp $0x44444444, %rsi
  jne 2f
  cmp $0x55555555, %rdi
  jne 2f
  cmp $0x66666666, %rbp
  jne 2f
  cmp $0x08080808, %r8
  jne 2f
  cmp $0x09090909, %r9
  jne 2f
  cmp $0x10101010, %r10
  jne 2f
  cmp $0x11011011, %r11
  jne 2f
  cmp $0x12121212, %r12
  jne 2f
  cmp $0x13131313, %r13
  jne 2f
  cmp $0x14141414, %r14
  jne 2f
  cmp $0x15151515, %r15
  jne 2f
  .irp n, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14
  vmovq %xmm\n, %rax
  cmp vector_values+32*\n(%rip), %rax
  mov $(100 + \n), %eax
  jne 2f
  vpextrq $1, %xmm\n, %rax
  cmp vector_values+32*\n+8(%rip), %rax
  mov $(100 + \n), %eax
  jne 2f
  .endr
  .irp n, 0,1,2,3,4,5,6,7
  vextracti128 $1, %ymm\n, %xmm15
  vmovq %xmm15, %rax
  cmp vector_values+32*\n+16(%rip), %rax
  mov $(200 + \n), %eax
  jne 2f
  vpextrq $1, %xmm15, %rax
  cmp vector_values+32*\n+24(%rip), %rax
  mov $(200 + \n), %eax
  jne 2f
  .endr
  stmxcsr regs_mxcsr_seen(%rip)
  mov regs_mxcsr_seen(%rip), %eax
  cmp mxcsr_value(%rip), %eax
  mov $300, %eax
  jne 2f
  lock incq regs_turns(%rip)
  // Every 4096 turns a 1 ms nanosleep, as a raw system call: the core is
  // shared, and a thread stopped inside it must see it restarted, not EINTR.
  testl $4095, regs_turns(%rip)
  jnz 1b
  push %rdi
  push %rsi
  lea nap(%rip), %rdi
  xor %esi, %esi
  mov $35, %eax
  syscall
  pop %rsi
  pop %rdi
  mov $0x22222222, %rcx
  mov $0x11011011, %r11
  test %rax, %rax
  jz 1b
  cmpl $0, regs_stop(%rip) /* EINTR from the stop signal's handler is fine */
  jne 3f
  mov $400, %eax
  jmp 2f
2:
  jmp 4f
3:
  xor %eax, %eax
4:
  vzeroupper
  ldmxcsr (%rsp)
  add $8, %rsp
  pop %r15
  pop %r14
  pop %r13
  pop %r12
  pop %rbp
  pop %rbx
  ret
  .size regs_check_loop, .-regs_check_loop

  .section .rodata
  .p2align 5
vector_values:
  .irp n, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14
  .quad 0x0123456789abcdef + \n, 0x1032547698badcfe + \n, 0x2301674589efabcd + \n, 0x3210765498fedcba + \n
  .endr
mxcsr_value:
  .long 0x7f80 /* all exceptions masked, rounding toward zero */
  .p2align 3
nap:
  .quad 0, 1000000

  .bss
  .globl regs_stop, regs_turns
regs_stop:
  .long 0
regs_mxcsr_seen:
  .long 0
  .p2align 3
regs_turns:
  .quad 0

  .section .note.GNU-stack, "", @progbits
