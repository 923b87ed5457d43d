/* End-to-end target for reading its memory from marker handlers: fires
 * `read(label, address, where)` (sonde/sdt.h, 5-byte site) and a stock
 * `stock_read` (sys/sdt.h, trap path; e2e_user_memory_stock.c) for a valid
 * 32-byte string and for every kind of bad address, and writes each case
 * (`case LABEL ADDRESS`) and what it saw itself to OUT_FILE.
 * Usage: e2e_user_memory MODE OUT_FILE, MODE one of
 *   plain     from the main thread;
 *   blocked   also from a thread with SIGSEGV and SIGBUS blocked;
 *   handler   with its own SIGSEGV handler (installed after start), which
 *             recovers from its own faults before and after the markers;
 *   nested    also from a SIGUSR1 handler on an alternate stack that blocks
 *             every signal but SIGTRAP;
 *   fork      also from a fork child;
 *   raw       as handler, the handler installed with the rt_sigaction system
 *             call itself (past libc, where the agent cannot see it).
 * Exits 0 when everything it checked of itself held. */
#define _GNU_SOURCE
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <sonde/sdt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

void e2e_user_memory_stock_read(const char *label, uintptr_t address, const char *where);

struct read_case {
  const char *label;
  uintptr_t address;
};
static struct read_case cases[16];
static int case_count;
static FILE *out;
static int failures;

static void add_case(const char *label, uintptr_t address) {
  cases[case_count].label = label;
  cases[case_count].address = address;
  ++case_count;
  fprintf(out, "case %s 0x%lx\n", label, (unsigned long)address);
}

static void check(int ok, const char *what) {
  if (!ok) {
    fprintf(out, "FAILED %s\n", what);
    ++failures;
  }
}

/* Both marker kinds for every case. */
__attribute__((noinline)) static void fire_all(const char *where) {
  for (int i = 0; i < case_count; ++i) {
    SONDE_PROBE(e2e_umem, read, cases[i].label, cases[i].address, where);
    e2e_user_memory_stock_read(cases[i].label, cases[i].address, where);
  }
}

static void set_up_cases(const char *outPath) {
  long page = sysconf(_SC_PAGESIZE);
  static const char valid[] = "a 32-byte string, read in place.";
  add_case("valid32", (uintptr_t)valid);
  add_case("null", 0);
  /* A file mapping past the end of its file: SIGBUS, not SIGSEGV. */
  char path[4096];
  snprintf(path, sizeof path, "%s.bus", outPath);
  FILE *file = fopen(path, "w");
  fputs("x", file);
  fclose(file);
  FILE *again = fopen(path, "r");
  char *mapped = mmap(NULL, 2 * page, PROT_READ, MAP_SHARED, fileno(again), 0);
  fclose(again);
  check(mapped != MAP_FAILED, "file mapping");
  /* Pages: readable, unmapped, readable, unmapped, readable, PROT_NONE guard;
   * far below where the kernel puts new mappings (top down from the
   * libraries), so that nothing the process maps later fills the holes. */
  char *pages = mmap((void *)0x100000000000ul, 6 * page, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
  check(pages != MAP_FAILED, "mmap at 16 TiB");
  munmap(pages + page, page);
  munmap(pages + 3 * page, page);
  mprotect(pages + 5 * page, page, PROT_NONE);
  add_case("unmapped", (uintptr_t)(pages + page));
  add_case("guard", (uintptr_t)(pages + 5 * page));
  add_case("kernel", 0xffffffff81000000ul);
  add_case("noncanonical", 0x8000000000000000ul);
  add_case("wrap", 0xfffffffffffffffcul);
  /* Strings whose last bytes are right before an unmapped page (with and
   * without their NUL) and before the guard page (without). */
  static const char edgeNul[] = "edge with its NUL";
  char *nulAt = pages + page - sizeof edgeNul;
  memcpy(nulAt, edgeNul, sizeof edgeNul);
  add_case("edge-nul", (uintptr_t)nulAt);
  static const char edgeOpen[] = "edge without a NUL";
  char *openAt = pages + 3 * page - (sizeof edgeOpen - 1);
  memcpy(openAt, edgeOpen, sizeof edgeOpen - 1);
  add_case("edge-open", (uintptr_t)openAt);
  static const char edgeGuard[] = "edge of the guard";
  char *guardAt = pages + 5 * page - (sizeof edgeGuard - 1);
  memcpy(guardAt, edgeGuard, sizeof edgeGuard - 1);
  add_case("edge-guard", (uintptr_t)guardAt);
  add_case("past-eof", (uintptr_t)(mapped + page));
  fflush(out);
}

/* blocked: a thread with SIGSEGV and SIGBUS blocked. */
static void *blocked_thread(void *arg) {
  (void)arg;
  sigset_t faults;
  sigemptyset(&faults);
  sigaddset(&faults, SIGSEGV);
  sigaddset(&faults, SIGBUS);
  pthread_sigmask(SIG_BLOCK, &faults, NULL);
  fire_all("blocked");
  return NULL;
}

/* handler: the program's own SIGSEGV handler, recovering with siglongjmp. */
static sigjmp_buf recovery;
static volatile sig_atomic_t own_faults;
static void own_handler(int sig, siginfo_t *info, void *context) {
  (void)sig, (void)info, (void)context;
  ++own_faults;
  siglongjmp(recovery, 1);
}

static void fault_and_recover(uintptr_t address) {
  if (sigsetjmp(recovery, 1) == 0) {
    volatile char c = *(volatile char *)address;
    (void)c;
    check(0, "own fault recovered");
  }
}

/* raw: the program's handler set with the system call, its own restorer. */
void e2e_raw_restorer(void);
__asm__(".text\n"
        ".globl e2e_raw_restorer\n"
        "e2e_raw_restorer:\n"
        "  mov $15, %eax\n" /* rt_sigreturn */
        "  syscall\n");
struct kernel_sigaction {
  void (*handler)(int, siginfo_t *, void *);
  unsigned long flags;
  void (*restorer)(void);
  uint64_t mask;
};
#define E2E_SA_RESTORER 0x04000000

static int set_handler_raw(void (*handler)(int, siginfo_t *, void *)) {
  struct kernel_sigaction ka = {handler, SA_SIGINFO | SA_ONSTACK | E2E_SA_RESTORER,
                                e2e_raw_restorer, 0};
  return (int)syscall(SYS_rt_sigaction, SIGSEGV, &ka, NULL, sizeof ka.mask);
}

/* nested: markers inside a handler that blocks every signal but SIGTRAP (a
 * stock marker's int3 with SIGTRAP blocked kills the process: the trap path's
 * limit, not a memory read's), on an alternate stack. */
static void nested_handler(int sig) {
  (void)sig;
  fire_all("nested");
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s plain|blocked|handler|nested|fork|raw OUT_FILE\n", argv[0]);
    return 2;
  }
  const char *mode = argv[1];
  out = fopen(argv[2], "w");
  if (!out)
    return 2;
  set_up_cases(argv[2]);
  if (strcmp(mode, "handler") == 0 || strcmp(mode, "raw") == 0) {
    static char altstack[64 * 1024];
    stack_t ss = {.ss_sp = altstack, .ss_size = sizeof altstack};
    sigaltstack(&ss, NULL);
    if (strcmp(mode, "raw") == 0) {
      check(set_handler_raw(own_handler) == 0, "rt_sigaction");
    } else {
      struct sigaction sa;
      memset(&sa, 0, sizeof sa);
      sa.sa_sigaction = own_handler;
      sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
      sigemptyset(&sa.sa_mask);
      check(sigaction(SIGSEGV, &sa, NULL) == 0, "sigaction");
      struct sigaction now;
      check(sigaction(SIGSEGV, NULL, &now) == 0 && now.sa_sigaction == own_handler,
            "sigaction reports the program's handler");
    }
    fault_and_recover(0);
    fire_all("main");
    fault_and_recover(cases[3].address); /* the guard page */
    check(own_faults == 2, "own handler ran for both faults");
    fprintf(out, "own faults %d\n", (int)own_faults);
  } else if (strcmp(mode, "nested") == 0) {
    static char altstack[64 * 1024];
    stack_t ss = {.ss_sp = altstack, .ss_size = sizeof altstack};
    sigaltstack(&ss, NULL);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = nested_handler;
    sa.sa_flags = SA_ONSTACK;
    sigfillset(&sa.sa_mask);
    sigdelset(&sa.sa_mask, SIGTRAP);
    check(sigaction(SIGUSR1, &sa, NULL) == 0, "sigaction");
    fire_all("main");
    raise(SIGUSR1);
    fire_all("after");
  } else {
    fire_all("main");
    if (strcmp(mode, "blocked") == 0) {
      pthread_t t;
      check(pthread_create(&t, NULL, blocked_thread, NULL) == 0, "pthread_create");
      pthread_join(t, NULL);
      fire_all("after");
    } else if (strcmp(mode, "fork") == 0) {
      fflush(out);
      pid_t child = fork();
      if (child == 0) {
        fire_all("child");
        _exit(0);
      }
      int status = -1;
      check(child > 0 && waitpid(child, &status, 0) == child, "fork and wait");
      check(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child exited 0");
      fire_all("after");
    }
  }
  fprintf(out, "done %d\n", failures);
  return fclose(out) == 0 && failures == 0 ? 0 : 1;
}
