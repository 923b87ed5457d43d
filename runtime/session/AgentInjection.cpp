#include "runtime/session/AgentInjection.h"

#include "runtime/session/InjectionCode.h"
#include "runtime/session/RemoteUnwinder.h"
#include "runtime/session/ResumeFrame.h"
#include "runtime/session/SafePoint.h"
#include "runtime/session/StoppedThread.h"
#include "runtime/session/TargetLibc.h"

#include <algorithm>
#include <cstring>
#include <dirent.h>
#include <fstream>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <thread>
#include <unistd.h>

extern "C" const char sonde_injection_code_begin[], sonde_injection_code_end[],
    sonde_injection_landing[], sonde_injection_landing_stop[], sonde_injection_landing_return[];

namespace sonde::session {

std::string_view injectionCode() {
  return {sonde_injection_code_begin,
          static_cast<size_t>(sonde_injection_code_end - sonde_injection_code_begin)};
}

LandingOffsets injectionLanding() {
  auto offset = [](const char *at) { return static_cast<size_t>(at - sonde_injection_code_begin); };
  return {offset(sonde_injection_landing), offset(sonde_injection_landing_stop),
          offset(sonde_injection_landing_return)};
}

namespace {

using namespace std::chrono_literals;

// Looking for a thread at a safe point, and the load itself (the loader may
// wait for another thread's dlopen).
constexpr auto kSafePointLimit = 5000ms;
constexpr auto kLoadLimit = 5000ms;
constexpr auto kMapLimit = 2000ms;
// The most of a thread's stack searched for unsafe return addresses; a deeper
// stack is not a safe point.
constexpr uint64_t kMaxStackScan = 1 << 20;
constexpr uint64_t kRedZone = 128;
// Frames unwound looking for the return out of unsafe code.
constexpr size_t kMaxFrames = 256;
// The stack the load needs below the thread's stack pointer.
constexpr uint64_t kStackRoom = 256 << 10;
// After its results, the code waits for sonde's `go` this many naps of 50 us
// (at least a second) before resuming the thread anyway: sonde may be gone.
constexpr uint64_t kNaps = 20000;
constexpr int64_t kNapNs = 50000;
constexpr uint64_t kCodePage = 4096;

char threadState(pid_t pid, const std::string &tid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/task/" + tid + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  size_t paren = text.rfind(')');
  return paren != std::string::npos && paren + 2 < text.size() ? text[paren + 2] : '?';
}

// The threads to try, the main one first; zombies and dead ones left out.
std::vector<pid_t> candidateThreads(pid_t pid) {
  std::vector<pid_t> out;
  if (DIR *dir = opendir(("/proc/" + std::to_string(pid) + "/task").c_str())) {
    while (dirent *e = readdir(dir)) {
      char state = e->d_name[0] == '.' ? 'X' : threadState(pid, e->d_name);
      if (state != 'Z' && state != 'X' && state != '?')
        out.push_back(static_cast<pid_t>(std::strtol(e->d_name, nullptr, 10)));
    }
    closedir(dir);
  }
  if (auto main = std::find(out.begin(), out.end(), pid); main != out.end())
    std::rotate(out.begin(), main, main + 1);
  return out;
}

// What the thread's status says that rules it out for good: a seccomp filter
// (which could kill the process for the calls the load makes) or a shadow
// stack (rt_sigreturn would need its token).
std::string whyNeverThread(pid_t pid, pid_t tid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("Seccomp:", 0) == 0 && line.find('2') != std::string::npos)
      return "it runs under a seccomp filter";
    if (line.rfind("x86_Thread_features:", 0) == 0 && line.find("shstk") != std::string::npos)
      return "it uses a shadow stack";
  }
  return "";
}

// The words of the thread's stack from its stack pointer up (nullopt when it
// cannot be read or is deeper than the scan goes).
std::optional<std::vector<uint64_t>> stackOf(pid_t pid, const user_regs_struct &r,
                                             const StoppedThread &thread) {
  std::optional<TargetMapping> stackMap = mappingAt(pid, r.rsp);
  if (!stackMap || stackMap->end - r.rsp > kMaxStackScan)
    return std::nullopt;
  std::vector<uint64_t> stack((stackMap->end - r.rsp) / 8);
  if (!thread.read(r.rsp, stack.data(), stack.size() * 8))
    return std::nullopt;
  return stack;
}

// Why `thread` must not load the agent now, or "".
std::string whyNotNow(pid_t pid, const StoppedThread &thread, const UnsafeCode &unsafe) {
  if (std::string why = whyNeverThread(pid, thread.tid()); !why.empty())
    return why;
  const user_regs_struct &r = thread.state().regs;
  std::optional<TargetMapping> stackMap = mappingAt(pid, r.rsp);
  if (!stackMap)
    return "its stack pointer is outside any mapping";
  // dlopen and the agent's constructors run on this stack; a thread stack
  // (unlike the main one, which grows) has its room fixed.
  if (stackMap->path != "[stack]" && r.rsp - stackMap->start < kStackRoom)
    return "it has less than " + std::to_string(kStackRoom >> 10) + " KiB of stack left";
  if (stackMap->end - r.rsp > kMaxStackScan)
    return "its stack is deeper than " + std::to_string(kMaxStackScan >> 10) + " KiB";
  std::optional<std::vector<uint64_t>> stack = stackOf(pid, r, thread);
  if (!stack)
    return "its stack cannot be read";
  std::string why = whyNotSafePoint(r.rip, *stack, unsafe);
  if (why.empty())
    return why;
  // A word of the stack named unsafe code: a return address, or a stale one
  // (postgres's idle postmaster keeps startup's calls into malloc). The CFI,
  // when it unwinds the whole stack, tells which.
  bool complete = false;
  std::string ignored;
  std::vector<StackFrame> frames =
      unwindStoppedThread(thread.tid(), kMaxFrames, &ignored, &complete);
  if (!complete || frames.front().pc != r.rip)
    return why;
  return whyNotSafePointFromFrames(frames, unsafe);
}

// The return out of the unsafe code the thread is in, if one can be found.
std::optional<ReturnSlot> returnSlotOf(const StoppedThread &thread, const UnsafeCode &unsafe) {
  const user_regs_struct &r = thread.state().regs;
  std::optional<std::vector<uint64_t>> stack = stackOf(thread.tid(), r, thread);
  std::string ignored; // without libunwind-ptrace, only safe points are taken
  std::vector<StackFrame> frames = unwindStoppedThread(thread.tid(), kMaxFrames, &ignored);
  if (!stack || frames.empty())
    return std::nullopt;
  return findReturnSlot(frames, r.rsp, *stack, unsafe);
}

struct Strings {
  std::string bytes;
  std::vector<size_t> offsets;
  size_t add(const std::string &s) {
    offsets.push_back(bytes.size());
    bytes += s;
    bytes += '\0';
    return offsets.back();
  }
};

// Makes the stopped thread map a page (libc's mmap, returning through a
// resume frame for its state: if sonde goes, it just resumes) and copies the
// code into it, with the landing's way on set to `landingReturn`. The thread
// is left stopped at the end of mmap, still on its way to the frame.
std::optional<uint64_t> mapCodePage(StoppedThread &thread, const TargetLibc &libc,
                                    uint64_t landingReturn, std::string *error) {
  const StoppedState &state = thread.state();
  ResumeFrame frame =
      buildResumeFrame(state, (state.regs.rsp - kRedZone) & ~uint64_t{63}, libc.restoreRt);
  if (!thread.write(frame.address, frame.bytes.data(), frame.bytes.size())) {
    *error = std::string("cannot write the target's stack: ") + std::strerror(errno);
    return std::nullopt;
  }
  user_regs_struct call = state.regs;
  call.rip = libc.mmap;
  call.rsp = frame.returnSlot;
  call.rdi = 0;
  call.rsi = kCodePage;
  call.rdx = PROT_READ | PROT_EXEC;
  call.rcx = MAP_PRIVATE | MAP_ANONYMOUS;
  call.r8 = ~0ull;
  call.r9 = 0;
  call.rax = 0;
  call.orig_rax = ~0ull; // not in a system call: nothing to restart now
  call.eflags &= ~uint64_t{0x400};
  std::optional<uint64_t> page = thread.runToSyscallExit(
      call, SYS_mmap, {0, kCodePage, PROT_READ | PROT_EXEC}, kMapLimit, error);
  if (!page)
    return std::nullopt;
  if (static_cast<int64_t>(*page) < 0 && static_cast<int64_t>(*page) > -4096) {
    *error = std::string("it could not map a page for the loader code: ") +
             std::strerror(static_cast<int>(-static_cast<int64_t>(*page)));
    return std::nullopt;
  }
  std::string code(injectionCode());
  std::memcpy(code.data() + injectionLanding().returnAddress, &landingReturn, 8);
  if (!thread.poke(*page, code, error))
    return std::nullopt;
  return page;
}

// The load, on a thread stopped at a safe point in `state` (see the header),
// with the code at `page`; the thread ends back in `state` by itself.
bool runLoad(StoppedThread &thread, const StoppedState &state, uint64_t page,
             const TargetLibc &libc, const InjectionRequest &request, std::string *error) {
  uint64_t top = (state.regs.rsp - kRedZone) & ~uint64_t{63};
  ResumeFrame frame = buildResumeFrame(state, top, libc.restoreRt);
  Strings strings;
  size_t path = strings.add(request.agentPath), symbol = strings.add("sonde_agent_attach"),
         socket = strings.add(request.socketName);
  uint64_t stringsAt = (frame.address - strings.bytes.size()) & ~uint64_t{15};
  uint64_t blockAt = (stringsAt - sizeof(InjectionBlock)) & ~uint64_t{15};
  InjectionBlock block{};
  block.dlopen = libc.dlopen, block.dlsym = libc.dlsym, block.dlerror = libc.dlerror;
  block.munmap = libc.munmap;
  block.page = page, block.pageSize = kCodePage;
  block.resume = frame.returnSlot;
  block.path = stringsAt + path, block.symbol = stringsAt + symbol;
  block.socket = stringsAt + socket;
  block.consumer = static_cast<uint64_t>(request.consumer);
  block.naps = kNaps, block.napNanoseconds = kNapNs;
  if (!thread.write(frame.address, frame.bytes.data(), frame.bytes.size()) ||
      !thread.write(stringsAt, strings.bytes.data(), strings.bytes.size()) ||
      !thread.write(blockAt, &block, sizeof block)) {
    *error = std::string("cannot write the target's stack: ") + std::strerror(errno);
    return false;
  }
  user_regs_struct call = state.regs;
  call.rip = page;
  call.rsp = (blockAt - 64) & ~uint64_t{15};
  call.rbx = blockAt;
  call.rax = 0;
  call.orig_rax = ~0ull;
  call.eflags &= ~uint64_t{0x400};
  if (!thread.resume(call, error))
    return false;

  auto readBlock = [&] { return thread.read(blockAt, &block, sizeof block); };
  bool done = thread.waitUntil([&] { return readBlock() && block.done == 1; }, kLoadLimit, error);
  uint32_t go = 1;
  if (!done && !thread.held())
    return false; // the process ended
  if (!done) {
    // It goes on by itself; told not to wait once it is through.
    thread.write(blockAt + offsetof(InjectionBlock, go), &go, sizeof go);
    *error = "loading the agent did not finish within " +
             std::to_string(kLoadLimit.count() / 1000) + " s (" + *error +
             "; its dynamic loader is busy?); the load ends in the process by itself";
    return false;
  }
  std::optional<uint64_t> rip = thread.stop(error);
  if (!rip)
    return false;
  // Once the thread has left the page, the block may be its stack again.
  bool inPage = *rip >= page && *rip < page + kCodePage;
  if (inPage && !readBlock()) {
    *error = "cannot read the loader's results";
    return false;
  }
  thread.write(blockAt + offsetof(InjectionBlock, go), &go, sizeof go);
  if (!inPage)
    return true; // the agent's connection will tell
  if (block.handle == 0) {
    std::string why = block.error ? thread.readString(block.error, 512) : "";
    *error = "it cannot load the agent: " + (why.empty() ? std::string("dlopen failed") : why);
    return false;
  }
  if (block.entry == 0) {
    *error = "the library loaded as the agent has no sonde_agent_attach: " + request.agentPath;
    return false;
  }
  if (static_cast<int>(block.result) != 0) {
    *error = static_cast<int>(block.result) == 1
                 ? "it already has a sonde agent attached (another sonde session, or its -c)"
                 : "the agent could not start its thread in it";
    return false;
  }
  return true;
}

// The load on a thread stopped at a safe point.
bool loadNow(StoppedThread &thread, const TargetLibc &libc, const InjectionRequest &request,
             std::string *error) {
  std::optional<uint64_t> page = mapCodePage(thread, libc, 0, error);
  return page && runLoad(thread, thread.state(), *page, libc, request, error);
}

enum class Outcome { Loaded, Failed, NotNow };

// The load on a thread stopped inside unsafe code: its return out of it is
// sent to the page's landing, where sonde takes the thread at a safe point.
// The thread runs meanwhile, each of its system calls a stop. If sonde goes
// before, the landing just returns to the caller (the page stays).
Outcome loadAtReturn(StoppedThread &thread, const ReturnSlot &slot, const TargetLibc &libc,
                     const UnsafeCode &unsafe, const InjectionRequest &request,
                     std::string *error) {
  std::optional<uint64_t> page = mapCodePage(thread, libc, slot.returnAddress, error);
  if (!page)
    return Outcome::Failed;
  uint64_t landing = *page + injectionLanding().entry;
  if (!thread.write(slot.slot, &landing, sizeof landing)) {
    *error = std::string("cannot write the target's stack: ") + std::strerror(errno);
    return Outcome::Failed;
  }
  if (!thread.runToSyscallExitAt(*page + injectionLanding().stop, kLoadLimit, error)) {
    if (thread.held())
      *error = "it did not return from " + slot.callee + " (" + *error + ")";
    return Outcome::Failed;
  }
  if (!thread.capture(error))
    return Outcome::Failed;
  // The landing's own way on, taken here: the return value it kept, and the
  // caller's code.
  StoppedState state = thread.state();
  uint64_t rax = 0;
  if (!thread.read(state.regs.rsp - 8, &rax, 8)) {
    *error = "cannot read the target's stack";
    return Outcome::Failed;
  }
  state.regs.rax = rax;
  state.regs.rip = slot.returnAddress;
  state.regs.orig_rax = ~0ull;
  if (!whyNotNow(request.pid, thread, unsafe).empty())
    return Outcome::NotNow; // the landing goes on by itself; the page stays
  return runLoad(thread, state, *page, libc, request, error) ? Outcome::Loaded : Outcome::Failed;
}

} // namespace

bool injectAgent(const InjectionRequest &request, std::chrono::microseconds *pause,
                 std::string *error) {
  std::optional<TargetLibc> libc = inspectTargetLibc(request.pid, error);
  if (!libc)
    return false;
  UnsafeCode unsafe(libc->unsafe);
  auto deadline = std::chrono::steady_clock::now() + kSafePointLimit;
  std::string lastWhy;
  // Each try interrupts the threads it looks at: back off a little while none
  // is safe (a thread in the loader or allocator 99 % of its time still gives
  // a safe point every few hundred tries).
  auto nap = 1ms;
  for (;;) {
    for (pid_t tid : candidateThreads(request.pid)) {
      std::string why;
      std::optional<StoppedThread> thread = StoppedThread::seize(tid, &why);
      if (!thread) {
        if (why.find("not permitted") != std::string::npos) {
          *error = why;
          return false;
        }
        continue; // the thread ended meanwhile
      }
      why = whyNotNow(request.pid, *thread, unsafe);
      if (why.empty()) {
        bool ok = loadNow(*thread, *libc, request, error);
        thread->detach();
        *pause = thread->heldFor();
        return ok;
      }
      if (whyNeverThread(request.pid, tid).empty()) {
        if (std::optional<ReturnSlot> slot = returnSlotOf(*thread, unsafe)) {
          Outcome o = loadAtReturn(*thread, *slot, *libc, unsafe, request, error);
          thread->detach();
          *pause = thread->heldFor();
          if (o != Outcome::NotNow)
            return o == Outcome::Loaded;
        }
      }
      lastWhy = "thread " + std::to_string(tid) + ": " + why;
    }
    if (std::chrono::steady_clock::now() >= deadline)
      break;
    std::this_thread::sleep_for(nap);
    nap = std::min(nap * 2, std::chrono::milliseconds(4));
  }
  *error = lastWhy.empty()
               ? "it has no thread left to load the agent"
               : "no thread of it reached a point where the agent can be loaded safely within " +
                     std::to_string(kSafePointLimit.count() / 1000) + " s (" + lastWhy + ")";
  return false;
}

} // namespace sonde::session
