// Whether a stopped thread of a -x target may be made to load the agent now.
// Loading runs dlopen, malloc and pthread_create on that thread; if it was
// stopped inside the dynamic loader, the allocator, fork or exit, it holds their
// locks (or is half-way through their state), and the load would deadlock on
// them or corrupt them. Sonde looks for such code on the thread's stack
// (return addresses, and the saved instruction pointers of signal frames) and
// at its instruction pointer, and waits for a better moment or another thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace sonde::session {

struct CodeRange {
  uint64_t begin = 0, end = 0; // [begin, end)
  std::string what;            // "the dynamic loader", "malloc()", ...
  // Returns to its caller once (not exit, pthread_exit, nor fork's twice).
  bool returns = true;
};

class UnsafeCode {
public:
  explicit UnsafeCode(std::vector<CodeRange> ranges);
  // The range holding `address`, or null.
  const CodeRange *holding(uint64_t address) const;
  bool empty() const { return ranges_.empty(); }

private:
  std::vector<CodeRange> ranges_; // sorted, not overlapping
};

// Why a thread at `rip`, whose stack from its stack pointer up holds `stack`,
// must not load the agent now ("it is inside dlopen"); "" when it may. A
// word of the stack that merely looks like such an address (a stale local)
// makes it wait too: the check errs on the side of the target.
std::string whyNotSafePoint(uint64_t rip, const std::vector<uint64_t> &stack,
                            const UnsafeCode &unsafe);

// libc functions that take the locks loading the agent needs, or run the
// process's code while holding them (dl_iterate_phdr's callbacks, exit's
// handlers, fork's atfork handlers).
const std::vector<std::string> &lockTakingLibcFunctions();
// Those of them that do not return to their caller just once.
bool returnsOnce(const std::string &libcFunction);

// One call frame of a thread: its instruction pointer, and its stack pointer
// (for a caller: the value the call returns with).
struct StackFrame {
  uint64_t pc = 0, sp = 0;
};

// whyNotSafePoint from the thread's call frames (innermost first), unwound with CFI
// to the outermost one: stale words of its stack (an old return into malloc
// left in a live frame) do not count. A caller's pc is a return address: its
// call is at pc - 1, which is checked too.
std::string whyNotSafePointFromFrames(const std::vector<StackFrame> &frames,
                                      const UnsafeCode &unsafe);

// Where a thread that is not at a safe point will be at one: the return out
// of the outermost unsafe code it is in.
struct ReturnSlot {
  uint64_t slot = 0;          // the stack address holding the return address
  uint64_t returnAddress = 0; // the caller's code it returns to
  std::string callee;         // what was called ("dlopen()")
};

// From the thread's unwound `frames` (innermost first) and its `stack` words
// (from `rsp` up): the slot of the return from the outermost frame in unsafe
// code to its caller, when that code returns (not exit, nor fork) and nothing
// unsafe is above the slot; nullopt otherwise.
std::optional<ReturnSlot> findReturnSlot(const std::vector<StackFrame> &frames, uint64_t rsp,
                                         const std::vector<uint64_t> &stack,
                                         const UnsafeCode &unsafe);

} // namespace sonde::session
