#include "runtime/session/UserCopy.h"

#include <atomic>

extern "C" const int64_t sonde_user_copy_table[], sonde_user_copy_table_end[];

namespace sonde::session {

namespace {
std::atomic<InPlaceReadGate> gate{nullptr};
} // namespace

uintptr_t userCopyFixup(uintptr_t pc) {
  auto base = reinterpret_cast<uintptr_t>(sonde_user_copy_table);
  for (const int64_t *e = sonde_user_copy_table; e < sonde_user_copy_table_end; e += 3)
    if (pc >= base + static_cast<uintptr_t>(e[0]) && pc < base + static_cast<uintptr_t>(e[1]))
      return base + static_cast<uintptr_t>(e[2]);
  return 0;
}

void setInPlaceReadGate(InPlaceReadGate g) { gate.store(g, std::memory_order_release); }

bool inPlaceReadsAllowed() {
  InPlaceReadGate g = gate.load(std::memory_order_acquire);
  return g && g();
}

} // namespace sonde::session
