/* A 32-bit (ia32) program with no C library: COUNT read(-1, 0, 0) calls through
 * int $0x80, then exit(0). Its call numbers are ia32's (read is 3, close on
 * x86-64), which the per-call syscall events ignore, and so must the raw
 * syscall dispatcher. COUNT is fixed: the program has no arguments parser. */
#define COUNT 1000

static long call3(long nr, long a, long b, long c) {
  long ret;
  __asm__ volatile("int $0x80" : "=a"(ret) : "a"(nr), "b"(a), "c"(b), "d"(c) : "memory");
  return ret;
}

void _start(void) {
  enum { kRead = 3, kExit = 1 };
  for (int i = 0; i < COUNT; ++i)
    call3(kRead, -1, 0, 0);
  call3(kExit, 0, 0, 0);
  for (;;) {
  }
}
