// What a thread of a -x target runs to load the agent (InjectionCode.h).
// Copied into the target: position-independent, no relocations; every address
// it needs comes from the block in rbx (callee-saved, so it survives the calls).
#include "runtime/session/InjectionCode.h"

#define RTLD_NOW_GLOBAL 0x102
#define NR_NANOSLEEP 35
#define NR_GETPID 39

  .section .rodata, "a"
  .globl sonde_injection_code_begin, sonde_injection_code_end
  .hidden sonde_injection_code_begin, sonde_injection_code_end
sonde_injection_code_begin:
  mov SONDE_INJECT_PATH(%rbx), %rdi
  mov $RTLD_NOW_GLOBAL, %esi
  call *SONDE_INJECT_DLOPEN(%rbx)
  mov %rax, SONDE_INJECT_HANDLE(%rbx)
  test %rax, %rax
  jz 2f
  mov %rax, %rdi
  mov SONDE_INJECT_SYMBOL(%rbx), %rsi
  call *SONDE_INJECT_DLSYM(%rbx)
  mov %rax, SONDE_INJECT_ENTRY(%rbx)
  test %rax, %rax
  jz 3f
  mov SONDE_INJECT_SOCKET(%rbx), %rdi
  mov SONDE_INJECT_CONSUMER(%rbx), %rsi
  call *%rax
  mov %rax, SONDE_INJECT_RESULT(%rbx)
  jmp 3f
2:
  call *SONDE_INJECT_DLERROR(%rbx)
  mov %rax, SONDE_INJECT_ERROR(%rbx)
3:
  movl $1, SONDE_INJECT_DONE(%rbx)
  // Waits for sonde to read the results (a bounded number of naps: a sonde
  // that died never says go). Raw system calls: nothing here needs libc.
  mov SONDE_INJECT_NAPS(%rbx), %r12
4:
  cmpl $0, SONDE_INJECT_GO(%rbx)
  jne 5f
  test %r12, %r12
  jz 5f
  dec %r12
  lea SONDE_INJECT_NAP(%rbx), %rdi
  xor %esi, %esi
  mov $NR_NANOSLEEP, %eax
  syscall
  jmp 4b
5:
  // munmap(page) as a tail call that returns into __restore_rt with the
  // resume frame: nothing runs from this page once the jump is taken.
  mov SONDE_INJECT_PAGE(%rbx), %rdi
  mov SONDE_INJECT_PAGE_SIZE(%rbx), %rsi
  mov SONDE_INJECT_MUNMAP(%rbx), %rax
  mov SONDE_INJECT_RESUME(%rbx), %rsp
  jmp *%rax

  // The landing: sonde makes a function that must not be interrupted (the
  // thread was inside the loader or the allocator) return here instead of to
  // its caller. A system call sonde stops at gives it the thread at a safe
  // point; without sonde, the landing just goes on to the caller. At a return
  // only rax (saved in the free red zone), rdx and the vector registers carry
  // values; the system call leaves all of these but rax, rcx and r11.
  .globl sonde_injection_landing, sonde_injection_landing_stop
  .hidden sonde_injection_landing, sonde_injection_landing_stop
  .globl sonde_injection_landing_return
  .hidden sonde_injection_landing_return
sonde_injection_landing:
  mov %rax, -8(%rsp)
  mov $NR_GETPID, %eax
  syscall
sonde_injection_landing_stop:
  mov -8(%rsp), %rax
  jmp *sonde_injection_landing_return(%rip)
  .p2align 3
sonde_injection_landing_return:
  .quad 0 // the caller's return address, written by sonde into the copy
sonde_injection_code_end:

  .section .note.GNU-stack, "", @progbits
