#include "runtime/session/SafePoint.h"

#include <algorithm>

namespace sonde::session {

UnsafeCode::UnsafeCode(std::vector<CodeRange> ranges) : ranges_(std::move(ranges)) {
  std::erase_if(ranges_, [](const CodeRange &r) { return r.end <= r.begin; });
  std::sort(ranges_.begin(), ranges_.end(),
            [](const CodeRange &a, const CodeRange &b) { return a.begin < b.begin; });
}

const CodeRange *UnsafeCode::holding(uint64_t address) const {
  // The last range starting at or before `address`; aliases and nested ranges
  // are rare enough that a short walk back covers them.
  auto it = std::upper_bound(ranges_.begin(), ranges_.end(), address,
                             [](uint64_t a, const CodeRange &r) { return a < r.begin; });
  for (int back = 0; it != ranges_.begin() && back < 4; ++back) {
    --it;
    if (address < it->end)
      return &*it;
  }
  return nullptr;
}

std::string whyNotSafePoint(uint64_t rip, const std::vector<uint64_t> &stack,
                            const UnsafeCode &unsafe) {
  if (const CodeRange *r = unsafe.holding(rip))
    return "it is running " + r->what;
  for (uint64_t word : stack)
    if (const CodeRange *r = unsafe.holding(word))
      return "it is inside " + r->what;
  return "";
}

std::string whyNotSafePointFromFrames(const std::vector<StackFrame> &frames,
                                      const UnsafeCode &unsafe) {
  for (size_t i = 0; i < frames.size(); ++i) {
    uint64_t pc = frames[i].pc;
    const CodeRange *r = unsafe.holding(pc);
    if (!r && i > 0)
      r = unsafe.holding(pc - 1);
    if (r)
      return (i == 0 ? "it is running " : "it is inside ") + r->what;
  }
  return "";
}

const std::vector<std::string> &lockTakingLibcFunctions() {
  static const std::vector<std::string> names = {
      // The allocator (its arena locks).
      "malloc", "free", "calloc", "realloc", "reallocarray", "memalign", "posix_memalign",
      "aligned_alloc", "valloc", "pvalloc", "malloc_trim", "malloc_usable_size", "mallinfo",
      "mallinfo2", "malloc_info", "malloc_stats", "mallopt",
      // The loader's entry points in libc (the rest of the loader is ld.so).
      "dlopen", "dlmopen", "dlclose", "dlsym", "dlvsym", "dladdr", "dladdr1", "dlinfo", "dlerror",
      "dl_iterate_phdr",
      // Process exit (the exit-handler lock), fork and its relatives (atfork and
      // every libc lock), threads (the stack cache lock).
      "exit", "quick_exit", "__cxa_atexit", "__cxa_finalize", "__cxa_thread_atexit_impl", "on_exit",
      "fork", "vfork", "_Fork", "system", "popen", "posix_spawn", "posix_spawnp", "pthread_create",
      "pthread_exit"};
  return names;
}

} // namespace sonde::session

namespace sonde::session {

bool returnsOnce(const std::string &name) {
  for (const char *never : {"exit", "quick_exit", "pthread_exit", "fork", "vfork", "_Fork",
                            "system", "popen", "posix_spawn", "posix_spawnp"})
    if (name == never)
      return false;
  return true;
}

std::optional<ReturnSlot> findReturnSlot(const std::vector<StackFrame> &frames, uint64_t rsp,
                                         const std::vector<uint64_t> &stack,
                                         const UnsafeCode &unsafe) {
  size_t outermost = frames.size();
  for (size_t i = 0; i < frames.size(); ++i)
    if (unsafe.holding(frames[i].pc))
      outermost = i;
  if (outermost + 1 >= frames.size())
    return std::nullopt; // no unsafe frame, or its caller is unknown
  const CodeRange *callee = unsafe.holding(frames[outermost].pc);
  const StackFrame &caller = frames[outermost + 1];
  uint64_t slot = caller.sp - 8;
  if (!callee->returns || slot < rsp || (slot - rsp) % 8 != 0 || (slot - rsp) / 8 >= stack.size())
    return std::nullopt;
  size_t index = (slot - rsp) / 8;
  if (stack[index] != caller.pc)
    return std::nullopt; // the CFI and the stack disagree
  for (size_t i = index + 1; i < stack.size(); ++i)
    if (unsafe.holding(stack[i]))
      return std::nullopt;
  return ReturnSlot{slot, caller.pc, callee->what};
}

} // namespace sonde::session
