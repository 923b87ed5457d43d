// The copy routines of UserCopy.h. Their loads from the source are the only
// instructions that may fault; each is listed in the exception table below
// (first byte, end, fixup), which the agent's SIGSEGV/SIGBUS handler looks up
// to resume at the fixup instead of faulting the process. Leaf functions with
// nothing on the stack, so a fixup only has to return -1.

  .text
  .globl sonde_user_copy, sonde_user_copy_string
  .hidden sonde_user_copy, sonde_user_copy_string

// long sonde_user_copy(void *dst /rdi/, const void *src /rsi/, size_t n /rdx/)
// All or nothing, as process_vm_readv's whole-read test: one 8-byte load for
// a long (the common case), else rep movsb.
  .p2align 4
  .type sonde_user_copy, @function
sonde_user_copy:
  .cfi_startproc
  cmp $8, %rdx
  jne 1f
.Lcopy_word:
  mov (%rsi), %rax
.Lcopy_word_end:
  mov %rax, (%rdi)
  xor %eax, %eax
  ret
1:
  mov %rdx, %rcx
.Lcopy_bytes:
  rep movsb
.Lcopy_bytes_end:
  xor %eax, %eax
  ret
.Lcopy_fault:
  mov $-1, %rax
  ret
  .cfi_endproc
  .size sonde_user_copy, . - sonde_user_copy

// long sonde_user_copy_string(char *dst /rdi/, const char *src /rsi/, size_t n /rdx/)
// [src, src + n) lies in one page (the caller copies page by page), so once a
// load succeeded none of the others can fault: 8 bytes at a time while 8 are
// left (a word holding the NUL is stored whole; dst has room for n bytes),
// then byte by byte.
  .p2align 4
  .type sonde_user_copy_string, @function
sonde_user_copy_string:
  .cfi_startproc
  xor %eax, %eax
  movabs $0x0101010101010101, %r8
  movabs $0x8080808080808080, %r9
1:
  lea 8(%rax), %rcx
  cmp %rdx, %rcx
  ja 3f
.Lstring_word:
  mov (%rsi,%rax), %rcx
.Lstring_word_end:
  mov %rcx, (%rdi,%rax)
  // A zero byte in rcx: (w - 0x01..01) & ~w & 0x80..80, lowest set bit exact.
  mov %rcx, %r10
  sub %r8, %r10
  not %rcx
  and %rcx, %r10
  and %r9, %r10
  jnz 2f
  add $8, %rax
  jmp 1b
2:
  bsf %r10, %r10
  shr $3, %r10
  add %r10, %rax
  ret
3:
  cmp %rdx, %rax
  jae 4f
.Lstring_byte:
  movzbl (%rsi,%rax), %ecx
.Lstring_byte_end:
  mov %cl, (%rdi,%rax)
  test %cl, %cl
  jz 4f
  inc %rax
  jmp 3b
4:
  ret
.Lstring_fault:
  mov $-1, %rax
  ret
  .cfi_endproc
  .size sonde_user_copy_string, . - sonde_user_copy_string

// The exception table: {first byte, end, fixup} per faulting load, offsets
// from the table itself (position-independent, no relocations).
  .section .rodata, "a"
  .p2align 3
  .globl sonde_user_copy_table, sonde_user_copy_table_end
  .hidden sonde_user_copy_table, sonde_user_copy_table_end
sonde_user_copy_table:
  .quad .Lcopy_word - sonde_user_copy_table, .Lcopy_word_end - sonde_user_copy_table
  .quad .Lcopy_fault - sonde_user_copy_table
  .quad .Lcopy_bytes - sonde_user_copy_table, .Lcopy_bytes_end - sonde_user_copy_table
  .quad .Lcopy_fault - sonde_user_copy_table
  .quad .Lstring_word - sonde_user_copy_table, .Lstring_word_end - sonde_user_copy_table
  .quad .Lstring_fault - sonde_user_copy_table
  .quad .Lstring_byte - sonde_user_copy_table, .Lstring_byte_end - sonde_user_copy_table
  .quad .Lstring_fault - sonde_user_copy_table
sonde_user_copy_table_end:

  .section .note.GNU-stack, "", @progbits
