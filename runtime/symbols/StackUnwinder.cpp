#include "runtime/symbols/StackUnwinder.h"

#include <dlfcn.h>
#include <libunwind.h>
#include <link.h>
#include <mutex>
#include <ucontext.h>

namespace sonde::symbols {

namespace {

// libunwind's local-unwinding entry points (the names its header maps
// unw_init_local2, unw_step and unw_get_reg to on x86-64).
struct Unwind {
  int (*initLocal2)(unw_cursor_t *, unw_context_t *, int) = nullptr;
  int (*step)(unw_cursor_t *) = nullptr;
  int (*getReg)(unw_cursor_t *, unw_regnum_t, unw_word_t *) = nullptr;
  std::string error;
};

const Unwind &unwindLibrary() {
  static Unwind u;
  static std::once_flag once;
  std::call_once(once, [] {
    void *lib = dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      u.error = std::string("cannot load libunwind: ") + dlerror();
      return;
    }
    u.initLocal2 = reinterpret_cast<decltype(u.initLocal2)>(dlsym(lib, "_ULx86_64_init_local2"));
    u.step = reinterpret_cast<decltype(u.step)>(dlsym(lib, "_ULx86_64_step"));
    u.getReg = reinterpret_cast<decltype(u.getReg)>(dlsym(lib, "_ULx86_64_get_reg"));
    if (!u.initLocal2 || !u.step || !u.getReg)
      u.error = "libunwind.so.8 lacks the local unwinding functions";
  });
  return u;
}

// Where the agent's own code lies when this runs inside the agent (a library):
// the frame of its thread-start wrapper, between the C library's start_thread
// and the program's routine, is not the program's. Empty inside sonde.
struct CodeRange {
  uint64_t start = 0, end = 0;
};

const CodeRange &agentCode() {
  static CodeRange range;
  static std::once_flag once;
  std::call_once(once, [] {
    dl_iterate_phdr(
        [](dl_phdr_info *info, size_t, void *data) {
          uint64_t self = reinterpret_cast<uint64_t>(&unwindFromMarker);
          bool mainProgram = info->dlpi_name == nullptr || info->dlpi_name[0] == '\0';
          for (int i = 0; i < info->dlpi_phnum; ++i) {
            const ElfW(Phdr) &ph = info->dlpi_phdr[i];
            uint64_t start = info->dlpi_addr + ph.p_vaddr, end = start + ph.p_memsz;
            if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X) || self < start || self >= end)
              continue;
            if (!mainProgram)
              *static_cast<CodeRange *>(data) = {start, end};
            return 1;
          }
          return 0;
        },
        &range);
  });
  return range;
}

} // namespace

size_t unwindFromMarker(const sonde_marker_frame &frame, uint64_t pc, uint64_t *pcs, size_t max,
                        std::string *error) {
  const Unwind &u = unwindLibrary();
  if (!u.initLocal2) {
    *error = u.error;
    return 0;
  }
  if (max == 0)
    return 0;
  // The thread as it was at the marker: libunwind reads registers from this
  // context while it steps, so it lives until the end.
  unw_context_t context{};
  greg_t *g = context.uc_mcontext.gregs;
  g[REG_R15] = static_cast<greg_t>(frame.r15), g[REG_R14] = static_cast<greg_t>(frame.r14);
  g[REG_R13] = static_cast<greg_t>(frame.r13), g[REG_R12] = static_cast<greg_t>(frame.r12);
  g[REG_RBP] = static_cast<greg_t>(frame.rbp), g[REG_RBX] = static_cast<greg_t>(frame.rbx);
  g[REG_R11] = static_cast<greg_t>(frame.r11), g[REG_R10] = static_cast<greg_t>(frame.r10);
  g[REG_R9] = static_cast<greg_t>(frame.r9), g[REG_R8] = static_cast<greg_t>(frame.r8);
  g[REG_RDI] = static_cast<greg_t>(frame.rdi), g[REG_RSI] = static_cast<greg_t>(frame.rsi);
  g[REG_RDX] = static_cast<greg_t>(frame.rdx), g[REG_RCX] = static_cast<greg_t>(frame.rcx);
  g[REG_RAX] = static_cast<greg_t>(frame.rax), g[REG_RSP] = static_cast<greg_t>(frame.rsp);
  g[REG_RIP] = static_cast<greg_t>(pc);
  unw_cursor_t cursor;
  // A signal frame: the marker is mid-function, so its own address (not the
  // address before it, as for a return address) finds its unwind row.
  if (u.initLocal2(&cursor, &context, UNW_INIT_SIGNAL_FRAME) < 0)
    return 0;
  size_t n = 0;
  pcs[n++] = pc;
  const CodeRange &agent = agentCode();
  while (n < max && u.step(&cursor) > 0) {
    unw_word_t ip = 0;
    if (u.getReg(&cursor, UNW_REG_IP, &ip) < 0 || ip == 0)
      break;
    if (ip >= agent.start && ip < agent.end)
      continue;
    pcs[n++] = ip;
  }
  return n;
}

} // namespace sonde::symbols
