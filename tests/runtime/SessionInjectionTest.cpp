// The pieces of -x's agent load that are pure logic: the resume frame a
// borrowed thread returns through (layout as rt_sigreturn reads it, system
// call restarts, the vector state's markers) and the safe-point check.
#include "runtime/session/InjectionCode.h"
#include "runtime/session/ResumeFrame.h"
#include "runtime/session/SafePoint.h"

#include <gtest/gtest.h>

#include <cstring>

namespace sonde::session {
namespace {

template <class T> T at(const std::vector<uint8_t> &bytes, size_t offset) {
  T v;
  std::memcpy(&v, bytes.data() + offset, sizeof v);
  return v;
}

StoppedState xsaveState() {
  StoppedState s;
  s.regs.rip = 0x401000;
  s.regs.rsp = 0x7ffd0000;
  s.regs.rax = 42;
  s.regs.orig_rax = ~0ull;
  s.regs.rbx = 0x1111, s.regs.r15 = 0x1515, s.regs.eflags = 0x246;
  s.regs.cs = 0x33, s.regs.ss = 0x2b;
  s.vectorState.assign(2696, 0xab);
  // The kernel's software bytes: magic1, extended size, features, size.
  uint32_t magic1 = 0x46505853, size = 2696, extended = 2700;
  uint64_t features = 0x2e7;
  std::memcpy(s.vectorState.data() + 464, &magic1, 4);
  std::memcpy(s.vectorState.data() + 468, &extended, 4);
  std::memcpy(s.vectorState.data() + 472, &features, 8);
  std::memcpy(s.vectorState.data() + 480, &size, 4);
  s.xsave = true;
  s.blockedSignals = 0x5a5a;
  return s;
}

// Offsets in the frame: the return slot, then the kernel's ucontext.
constexpr size_t kUc = 8, kMcontext = kUc + 40, kSigmask = kUc + 296;
constexpr size_t kRip = kMcontext + 16 * 8, kRax = kMcontext + 13 * 8, kFpstate = kMcontext + 184;

TEST(ResumeFrame, LaysOutWhatRtSigreturnReads) {
  StoppedState s = xsaveState();
  uint64_t top = 0x7ffcff00;
  ResumeFrame f = buildResumeFrame(s, top, 0x7f0000001234);
  EXPECT_EQ(f.address % 16, 8u) << "a function entered with this stack pointer sees it aligned";
  EXPECT_EQ(f.returnSlot, f.address);
  EXPECT_LE(f.address + f.bytes.size(), top);
  EXPECT_EQ(at<uint64_t>(f.bytes, 0), 0x7f0000001234u);
  EXPECT_EQ(at<uint64_t>(f.bytes, kUc), 7u) << "FP_XSTATE | SIGCONTEXT_SS | STRICT_RESTORE_SS";
  EXPECT_EQ(at<int32_t>(f.bytes, kUc + 24), 3) << "the alternate stack is left as it is";
  EXPECT_EQ(at<uint64_t>(f.bytes, kRip), 0x401000u);
  EXPECT_EQ(at<uint64_t>(f.bytes, kRax), 42u);
  EXPECT_EQ(at<uint64_t>(f.bytes, kMcontext + 11 * 8), 0x1111u);     // rbx
  EXPECT_EQ(at<uint64_t>(f.bytes, kMcontext + 7 * 8), 0x1515u);      // r15
  EXPECT_EQ(at<uint64_t>(f.bytes, kMcontext + 15 * 8), 0x7ffd0000u); // rsp
  EXPECT_EQ(at<uint16_t>(f.bytes, kMcontext + 144), 0x33);           // cs
  EXPECT_EQ(at<uint16_t>(f.bytes, kMcontext + 150), 0x2b);           // ss
  EXPECT_EQ(at<uint64_t>(f.bytes, kSigmask), 0x5a5au);
  uint64_t fp = at<uint64_t>(f.bytes, kFpstate);
  EXPECT_EQ(fp % 64, 0u) << "XRSTOR needs 64-byte alignment";
  size_t fpAt = fp - f.address;
  ASSERT_LE(fpAt + 2696 + 4, f.bytes.size());
  EXPECT_EQ(at<uint8_t>(f.bytes, fpAt + 100), 0xab);
  EXPECT_EQ(at<uint32_t>(f.bytes, fpAt + 464), 0x46505853u);
  EXPECT_EQ(at<uint32_t>(f.bytes, fpAt + 468), 2700u);
  EXPECT_EQ(at<uint64_t>(f.bytes, fpAt + 472), 0x2e7u);
  EXPECT_EQ(at<uint32_t>(f.bytes, fpAt + 480), 2696u);
  EXPECT_EQ(at<uint32_t>(f.bytes, fpAt + 2696), 0x46505845u) << "the second magic word";
}

TEST(ResumeFrame, FxsaveOnlyHasNoXstateMarkers) {
  StoppedState s = xsaveState();
  s.vectorState.assign(512, 0xcd);
  s.xsave = false;
  ResumeFrame f = buildResumeFrame(s, 0x7ffcff00, 1);
  EXPECT_EQ(at<uint64_t>(f.bytes, kUc), 6u);
  size_t fpAt = at<uint64_t>(f.bytes, kFpstate) - f.address;
  EXPECT_EQ(at<uint32_t>(f.bytes, fpAt + 464), 0u);
  EXPECT_EQ(at<uint8_t>(f.bytes, fpAt + 100), 0xcd);
}

TEST(ResumeFrame, InterruptedSystemCallsAreIssuedAgain) {
  user_regs_struct r{};
  r.rip = 0x1002;
  r.orig_rax = 35; // nanosleep
  for (int64_t code : {-512, -513, -514, -516}) {
    r.rax = static_cast<uint64_t>(code);
    user_regs_struct now = resumedRegisters(r);
    EXPECT_EQ(now.rax, 35u) << code;
    EXPECT_EQ(now.rip, 0x1000u) << code;
  }
  r.rax = static_cast<uint64_t>(-4); // EINTR: the call returns it
  EXPECT_EQ(resumedRegisters(r).rip, 0x1002u);
  r.rax = static_cast<uint64_t>(-512);
  r.orig_rax = ~0ull; // not in a system call: rax is a value like any other
  EXPECT_EQ(resumedRegisters(r).rip, 0x1002u);
  EXPECT_EQ(resumedRegisters(r).rax, static_cast<uint64_t>(-512));
}

TEST(ResumeFrame, RestoreRtIsRtSigreturn) {
  EXPECT_EQ(kRestoreRtCode, std::string("\x48\xc7\xc0\x0f\x00\x00\x00\x0f\x05", 9));
}

TEST(SafePoint, CodeOnTheStackOrAtTheInstructionPointerMakesItWait) {
  UnsafeCode unsafe({{0x7000, 0x8000, "the dynamic loader"},
                     {0x1000, 0x1100, "malloc()"},
                     {0x2000, 0x2040, "dl_iterate_phdr()"}});
  EXPECT_EQ(whyNotSafePoint(0x5000, {0x4000, 0x9000, 0, 0x1100}, unsafe), "");
  EXPECT_EQ(whyNotSafePoint(0x1010, {}, unsafe), "it is running malloc()");
  EXPECT_EQ(whyNotSafePoint(0x5000, {0x4000, 0x2010}, unsafe), "it is inside dl_iterate_phdr()");
  EXPECT_EQ(whyNotSafePoint(0x5000, {0x7fff}, unsafe), "it is inside the dynamic loader");
  EXPECT_EQ(whyNotSafePoint(0x0fff, {0x8000, 0x2040}, unsafe), "") << "ends are exclusive";
}

TEST(SafePoint, UnwoundFramesCountOnlyTheirOwnCode) {
  UnsafeCode unsafe({{0x1000, 0x1100, "malloc()"}, {0x7000, 0x8000, "the dynamic loader"}});
  EXPECT_EQ(whyNotSafePointFromFrames({{0x5000, 0}, {0x5200, 0}, {0x6000, 0}}, unsafe), "");
  EXPECT_EQ(whyNotSafePointFromFrames({{0x1010, 0}, {0x5200, 0}}, unsafe),
            "it is running malloc()");
  EXPECT_EQ(whyNotSafePointFromFrames({{0x5000, 0}, {0x7010, 0}, {0x6000, 0}}, unsafe),
            "it is inside the dynamic loader");
  // A caller's pc is a return address: one at malloc's end returns from a call
  // at its last instruction (a noreturn callee), still inside it.
  EXPECT_EQ(whyNotSafePointFromFrames({{0x5000, 0}, {0x1100, 0}}, unsafe), "it is inside malloc()");
  EXPECT_EQ(whyNotSafePointFromFrames({{0x1100, 0}}, unsafe), "") << "frame 0's pc is its own";
}

TEST(SafePoint, NestedAndUnsortedRangesAreFound) {
  UnsafeCode unsafe({{0x3000, 0x3100, "b"}, {0x1000, 0x5000, "a"}, {0x3010, 0x3020, "c"}});
  ASSERT_NE(unsafe.holding(0x3050), nullptr);
  EXPECT_NE(unsafe.holding(0x4000), nullptr);
  EXPECT_EQ(unsafe.holding(0x5000), nullptr);
}

TEST(SafePoint, TheReturnOutOfTheOutermostUnsafeFrameIsTaken) {
  UnsafeCode unsafe({{0x7000, 0x8000, "the dynamic loader"},
                     {0x1000, 0x1100, "dlopen()"},
                     {0x1200, 0x1300, "exit()", false}});
  // Stopped in the loader, called by dlopen, called by the program at 0x5123.
  uint64_t rsp = 0x10000;
  std::vector<uint64_t> stack(32, 0);
  stack[3] = 0x7010;  // a return into the loader
  stack[9] = 0x1050;  // dlopen's return from the loader
  stack[12] = 0x5123; // the program's return from dlopen: slot 0x10060
  stack[20] = 0x5999;
  std::vector<StackFrame> frames = {{0x7500, rsp},
                                    {0x7010, rsp + 4 * 8},
                                    {0x1050, rsp + 10 * 8},
                                    {0x5123, rsp + 13 * 8},
                                    {0x5999, rsp + 21 * 8}};
  std::optional<ReturnSlot> slot = findReturnSlot(frames, rsp, stack, unsafe);
  ASSERT_TRUE(slot);
  EXPECT_EQ(slot->slot, rsp + 12 * 8);
  EXPECT_EQ(slot->returnAddress, 0x5123u);
  EXPECT_EQ(slot->callee, "dlopen()");

  // A copy of the return address lower down (dlopen keeps its caller) is not it.
  stack[10] = 0x5123;
  EXPECT_EQ(findReturnSlot(frames, rsp, stack, unsafe)->slot, rsp + 12 * 8);
  // The CFI and the stack disagree: nothing.
  stack[12] = 0x5124;
  EXPECT_FALSE(findReturnSlot(frames, rsp, stack, unsafe));
  stack[12] = 0x5123;
  // Something unsafe above the slot: the return would not be a safe point.
  stack[25] = 0x1010;
  EXPECT_FALSE(findReturnSlot(frames, rsp, stack, unsafe));
  stack[25] = 0;
  // exit() never returns: no landing there.
  frames[2].pc = 0x1250;
  EXPECT_FALSE(findReturnSlot(frames, rsp, stack, unsafe));
  // The unwinding stopped inside the unsafe code: the caller is unknown.
  frames.resize(2);
  EXPECT_FALSE(findReturnSlot(frames, rsp, stack, unsafe));
}

TEST(InjectionCode, IsCopiedWholeWithItsLanding) {
  std::string_view code = injectionCode();
  LandingOffsets landing = injectionLanding();
  EXPECT_LE(code.size(), 4096u) << "it must fit the page it is copied to";
  EXPECT_LT(landing.entry, landing.stop);
  EXPECT_LT(landing.stop, landing.returnAddress);
  EXPECT_EQ(landing.returnAddress + 8, code.size());
  EXPECT_EQ(landing.returnAddress % 8, 0u);
  // The landing's system call ends right where sonde stops it.
  EXPECT_EQ(code.substr(landing.stop - 2, 2), std::string_view("\x0f\x05", 2));
}

} // namespace
} // namespace sonde::session
