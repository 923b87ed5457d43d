#include "runtime/agent/CodePatcher.h"

#include <atomic>
#include <cerrno>
#include <cstring>
#include <linux/membarrier.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace sonde::agent {

namespace {

// The membarrier command syncAllThreads() issues; 0 when none is registered.
std::atomic<int> syncCommand{-1};

long membarrier(int cmd) { return syscall(__NR_membarrier, cmd, 0, 0); }

int registerSync() {
  long supported = membarrier(MEMBARRIER_CMD_QUERY);
  if (supported < 0)
    return 0;
  if ((supported & MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE) &&
      membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE) == 0)
    return MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE;
  if ((supported & MEMBARRIER_CMD_PRIVATE_EXPEDITED) &&
      membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0)
    return MEMBARRIER_CMD_PRIVATE_EXPEDITED;
  return 0;
}

constexpr uintptr_t kPage = 4096;

bool protect(uintptr_t address, size_t size, int prot, std::string *error) {
  uintptr_t first = address & ~(kPage - 1);
  uintptr_t last = (address + size - 1) & ~(kPage - 1);
  if (mprotect(reinterpret_cast<void *>(first), last - first + kPage, prot) == 0)
    return true;
  if (error)
    *error = std::string("cannot make code writable: ") + std::strerror(errno);
  return false;
}

void store(uintptr_t address, uint8_t byte) {
  reinterpret_cast<std::atomic<uint8_t> *>(address)->store(byte, std::memory_order_seq_cst);
}

} // namespace

void initCodeSync() {
  int expected = -1;
  syncCommand.compare_exchange_strong(expected, registerSync());
}

bool syncAllThreads() {
  int cmd = syncCommand.load();
  std::atomic_thread_fence(std::memory_order_seq_cst);
  return cmd > 0 && membarrier(cmd) == 0;
}

bool crossThreadFenceAvailable() { return syncCommand.load() > 0; }

bool writeCode(uintptr_t address, const uint8_t *bytes, size_t size, std::string *error) {
  if (!protect(address, size, PROT_READ | PROT_WRITE | PROT_EXEC, error))
    return false;
  if (size > 1) {
    store(address, 0xcc);
    syncAllThreads();
    // No thread can start an instruction inside the site: its tail is free to change.
    for (size_t i = 1; i < size; ++i)
      store(address + i, bytes[i]);
    syncAllThreads();
  }
  store(address, bytes[0]);
  syncAllThreads();
  protect(address, size, PROT_READ | PROT_EXEC, nullptr);
  return true;
}

} // namespace sonde::agent
