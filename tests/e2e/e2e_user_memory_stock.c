/* The stock <sys/sdt.h> marker of e2e_user_memory (a 1-byte NOP: the trap
 * path, where handlers run in the agent's SIGTRAP handler). */
#include <stdint.h>
#include <sys/sdt.h>

__attribute__((noinline)) void e2e_user_memory_stock_read(const char *label, uintptr_t address,
                                                          const char *where) {
  STAP_PROBE3(e2e_umem, stock_read, label, address, where);
}
