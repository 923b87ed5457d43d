#include "runtime/session/ResumeFrame.h"

#include <cstddef>
#include <cstring>

namespace sonde::session {

namespace {

// The kernel's x86-64 struct sigcontext and struct ucontext (uapi asm/), which
// rt_sigreturn reads; glibc's ucontext_t is a larger, different type.
struct FrameSigcontext {
  uint64_t r8, r9, r10, r11, r12, r13, r14, r15;
  uint64_t rdi, rsi, rbp, rbx, rdx, rax, rcx, rsp, rip;
  uint64_t eflags;
  uint16_t cs, gs, fs, ss;
  uint64_t err, trapno, oldmask, cr2;
  uint64_t fpstate;
  uint64_t reserved[8];
};

struct FrameUcontext {
  uint64_t flags;
  uint64_t link;
  uint64_t stackPointer; // uc_stack: the alternate signal stack
  int32_t stackFlags;
  int32_t pad;
  uint64_t stackSize;
  FrameSigcontext mcontext;
  uint64_t blockedSignals; // the kernel's sigset_t: 64 bits
};
static_assert(offsetof(FrameUcontext, mcontext) == 40);
static_assert(offsetof(FrameUcontext, blockedSignals) == 296);
static_assert(sizeof(FrameUcontext) == 304);

constexpr uint64_t kUcFpXstate = 1, kUcSigcontextSs = 2, kUcStrictRestoreSs = 4;
// Neither 0, SS_ONSTACK nor SS_DISABLE: sigaltstack refuses it, and rt_sigreturn
// ignores that refusal, so the thread's alternate stack stays as it is (sonde
// cannot read it to write it back).
constexpr int32_t kLeaveAltStack = 3;
constexpr uint64_t kSiginfoRoom = 128;
// struct _fpx_sw_bytes in the FXSAVE area's software-reserved bytes, and the
// word after the XSAVE area that tells rt_sigreturn the frame has one.
constexpr size_t kSwBytesOffset = 464;
constexpr uint32_t kFpXstateMagic1 = 0x46505853, kFpXstateMagic2 = 0x46505845;
constexpr size_t kXstateBvOffset = 512;
constexpr size_t kFxsaveSize = 512;

// The kernel's restart codes (not in any uapi header).
constexpr int64_t kErestartSys = 512, kErestartNoIntr = 513, kErestartNoHand = 514,
                  kErestartRestartBlock = 516;

uint64_t alignDown(uint64_t v, uint64_t a) { return v & ~(a - 1); }

template <class T> void put(std::vector<uint8_t> &bytes, size_t at, const T &value) {
  std::memcpy(bytes.data() + at, &value, sizeof value);
}

// The vector state as rt_sigreturn reads it: software bytes describing the
// XSAVE area and the second magic word after it; FXSAVE alone has neither.
std::vector<uint8_t> vectorFrame(const StoppedState &state) {
  std::vector<uint8_t> fp = state.vectorState;
  if (!state.xsave || fp.size() < kXstateBvOffset + 64) {
    fp.resize(kFxsaveSize);
    std::memset(fp.data() + kSwBytesOffset, 0, kFxsaveSize - kSwBytesOffset);
    return fp;
  }
  uint32_t magic1 = 0;
  uint64_t features = 0;
  std::memcpy(&magic1, fp.data() + kSwBytesOffset, 4);
  if (magic1 == kFpXstateMagic1) {
    std::memcpy(&features, fp.data() + kSwBytesOffset + 8, 8);
  } else {
    // x87 and SSE always, and whatever else the header says is in use.
    std::memcpy(&features, fp.data() + kXstateBvOffset, 8);
    features |= 3;
  }
  uint32_t size = static_cast<uint32_t>(fp.size());
  put(fp, kSwBytesOffset, kFpXstateMagic1);
  put(fp, kSwBytesOffset + 4, size + 4); // extended_size
  put(fp, kSwBytesOffset + 8, features);
  put(fp, kSwBytesOffset + 16, size); // xstate_size
  fp.resize(size + 4);
  put(fp, size, kFpXstateMagic2);
  return fp;
}

} // namespace

const std::string kRestoreRtCode("\x48\xc7\xc0\x0f\x00\x00\x00\x0f\x05", 9);

user_regs_struct resumedRegisters(const user_regs_struct &regs) {
  user_regs_struct r = regs;
  if (static_cast<int64_t>(r.orig_rax) < 0)
    return r;
  int64_t rc = static_cast<int64_t>(r.rax);
  // rt_sigreturn clears the task's restart block, so a call that would have
  // gone through restart_syscall is issued afresh, with its arguments.
  if (rc == -kErestartSys || rc == -kErestartNoIntr || rc == -kErestartNoHand ||
      rc == -kErestartRestartBlock) {
    r.rax = r.orig_rax;
    r.rip -= 2; // the `syscall` instruction
  }
  return r;
}

ResumeFrame buildResumeFrame(const StoppedState &state, uint64_t top, uint64_t restoreRt) {
  std::vector<uint8_t> fp = vectorFrame(state);
  uint64_t fpAt = alignDown(top - fp.size(), 64);
  uint64_t ucAt = alignDown(fpAt - kSiginfoRoom - sizeof(FrameUcontext), 16);
  ResumeFrame frame;
  frame.address = frame.returnSlot = ucAt - 8;
  frame.bytes.assign(fpAt + fp.size() - frame.address, 0);
  put(frame.bytes, 0, restoreRt);
  std::memcpy(frame.bytes.data() + (fpAt - frame.address), fp.data(), fp.size());

  const user_regs_struct r = resumedRegisters(state.regs);
  FrameUcontext uc{};
  uc.flags = (state.xsave ? kUcFpXstate : 0) | kUcSigcontextSs | kUcStrictRestoreSs;
  uc.stackFlags = kLeaveAltStack;
  FrameSigcontext &m = uc.mcontext;
  m.r8 = r.r8, m.r9 = r.r9, m.r10 = r.r10, m.r11 = r.r11;
  m.r12 = r.r12, m.r13 = r.r13, m.r14 = r.r14, m.r15 = r.r15;
  m.rdi = r.rdi, m.rsi = r.rsi, m.rbp = r.rbp, m.rbx = r.rbx, m.rdx = r.rdx;
  m.rax = r.rax, m.rcx = r.rcx, m.rsp = r.rsp, m.rip = r.rip;
  m.eflags = r.eflags;
  m.cs = static_cast<uint16_t>(r.cs);
  m.ss = static_cast<uint16_t>(r.ss);
  m.fpstate = fpAt;
  uc.blockedSignals = state.blockedSignals;
  put(frame.bytes, 8, uc);
  return frame;
}

} // namespace sonde::session
