// The x86-64 call numbers by event name, and which syscalls:* programs the raw
// syscall dispatchers run (planSyscallDispatch): formats as this kernel writes
// them.
#include "probes/tracepoint/SyscallDispatch.h"
#include "probes/tracepoint/SyscallTable.h"

#include <gtest/gtest.h>

#include <deque>
#include <string>

namespace sonde::probes::tracepoint {
namespace {

TEST(SyscallTable, NamesTheCallsOfTheHeadersTheRenamedEventsAndTheNewerCalls) {
  EXPECT_EQ(syscallNumber("read"), 0u);
  EXPECT_EQ(syscallNumber("close"), 3u);
  EXPECT_EQ(syscallNumber("openat"), 257u);
  EXPECT_EQ(syscallNumber("newfstat"), 5u); // fstat's events
  EXPECT_EQ(syscallNumber("newuname"), 63u);
  EXPECT_EQ(syscallNumber("sendfile64"), 40u);
  EXPECT_EQ(syscallNumber("umount"), 166u); // umount2's
  EXPECT_EQ(syscallNumber("cachestat"), 451u);
  EXPECT_EQ(syscallNumber("file_setattr"), 469u);
  EXPECT_EQ(syscallNumber("no_such_call"), std::nullopt);
  EXPECT_EQ(syscallNumber(""), std::nullopt);
}

std::string commonFields() {
  return "name: x\nID: 1\nformat:\n"
         "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
         "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
         "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
         "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n";
}

const std::string kEnterTwoArgs = commonFields() +
                                  "\tfield:int __syscall_nr;\toffset:8;\tsize:4;\tsigned:1;\n"
                                  "\tfield:unsigned int fd;\toffset:16;\tsize:8;\tsigned:0;\n"
                                  "\tfield:const char * buf;\toffset:24;\tsize:8;\tsigned:0;\n";
const std::string kEnterNoArgs =
    commonFields() + "\tfield:int __syscall_nr;\toffset:8;\tsize:4;\tsigned:1;\n";
const std::string kExit = commonFields() +
                          "\tfield:int __syscall_nr;\toffset:8;\tsize:4;\tsigned:1;\n"
                          "\tfield:long ret;\toffset:16;\tsize:8;\tsigned:1;\n";
// A newer kernel's event that records a user string after the arguments.
const std::string kEnterWithString =
    commonFields() + "\tfield:int __syscall_nr;\toffset:8;\tsize:4;\tsigned:1;\n"
                     "\tfield:const char * filename;\toffset:16;\tsize:8;\tsigned:0;\n"
                     "\tfield:__data_loc char[] __filename_val;\toffset:24;\tsize:4;\tsigned:0;\n";

class Plan : public ::testing::Test {
protected:
  const TracepointFormat *format(const std::string &text) {
    std::string error;
    formats_.push_back(*parseTracepointFormat(text, &error));
    return &formats_.back();
  }
  // Enter (or exit) programs, probe index = position, on the first `n` calls
  // of the table from `from`, all with `text`'s format.
  void add(size_t n, const std::string &direction, const std::string &text, size_t from = 0) {
    static const char *const kCalls[] = {
        "read",    "write",    "open",   "close",    "newstat", "newfstat", "newlstat",
        "poll",    "lseek",    "mmap",   "mprotect", "munmap",  "brk",      "ioctl",
        "pread64", "pwrite64", "readv",  "writev",   "access",  "pipe",     "select",
        "dup",     "dup2",     "getpid", "socket",   "connect", "cachestat"};
    const TracepointFormat *f = format(text);
    for (size_t i = from; i < from + n; ++i)
      programs.push_back({static_cast<uint32_t>(programs.size()), "syscalls",
                          "sys_" + direction + "_" + kCalls[i], f});
  }
  std::vector<TracepointProgram> programs;

private:
  std::deque<TracepointFormat> formats_;
};

TEST_F(Plan, ManyCallsOfOneDirectionAreDispatchedByNumber) {
  add(kSyscallDispatchMinEvents + 1, "enter", kEnterTwoArgs);
  std::vector<SyscallSlot> slots = planSyscallDispatch(programs);
  ASSERT_EQ(slots.size(), kSyscallDispatchMinEvents + 1);
  for (const SyscallSlot &s : slots) {
    EXPECT_EQ(s.direction, SyscallDirection::Enter);
    EXPECT_EQ(s.number, *syscallNumber(programs[s.probeIndex].event.substr(10)));
  }
}

TEST_F(Plan, FewCallsStayOnTheirEvents) {
  add(kSyscallDispatchMinEvents, "enter", kEnterTwoArgs);
  add(kSyscallDispatchMinEvents, "exit", kExit);
  EXPECT_TRUE(planSyscallDispatch(programs).empty());
}

TEST_F(Plan, EachDirectionIsCountedOnItsOwn) {
  add(kSyscallDispatchMinEvents + 1, "exit", kExit);
  add(3, "enter", kEnterNoArgs);
  std::vector<SyscallSlot> slots = planSyscallDispatch(programs);
  ASSERT_EQ(slots.size(), kSyscallDispatchMinEvents + 1);
  for (const SyscallSlot &s : slots)
    EXPECT_EQ(s.direction, SyscallDirection::Exit);
}

TEST_F(Plan, TwoProgramsOnOneCallStayOnItsEvent) {
  add(kSyscallDispatchMinEvents + 2, "enter", kEnterNoArgs);
  add(1, "enter", kEnterNoArgs, 3); // a second program on close
  std::vector<SyscallSlot> slots = planSyscallDispatch(programs);
  EXPECT_EQ(slots.size(), kSyscallDispatchMinEvents + 1);
  for (const SyscallSlot &s : slots)
    EXPECT_NE(s.number, 3u);
}

TEST_F(Plan, OnlyEventsWithTheRawLayoutANumberAndFormatFieldsAreDispatched) {
  add(kSyscallDispatchMinEvents + 1, "enter", kEnterTwoArgs);
  size_t dispatchable = programs.size();
  add(1, "enter", kEnterWithString, 20); // select: a field the raw record lacks
  programs.push_back({99, "syscalls", "sys_enter_getpid", nullptr}); // no format
  programs.push_back({100, "syscalls", "sys_enter_socket", format(kEnterNoArgs), true}); // raw_tp
  programs.push_back({101, "syscalls", "sys_enter_no_such_call", format(kEnterNoArgs)});
  programs.push_back({102, "sched", "sys_enter_connect", format(kEnterNoArgs)});
  std::vector<SyscallSlot> slots = planSyscallDispatch(programs);
  EXPECT_EQ(slots.size(), dispatchable);
  for (const SyscallSlot &s : slots)
    EXPECT_LT(s.probeIndex, dispatchable);
}

TEST_F(Plan, ExitEventsNeedTheReturnValueAlone) {
  add(kSyscallDispatchMinEvents + 2, "exit", kExit);
  add(1, "exit", kEnterTwoArgs, kSyscallDispatchMinEvents + 2);
  std::vector<SyscallSlot> slots = planSyscallDispatch(programs);
  EXPECT_EQ(slots.size(), kSyscallDispatchMinEvents + 2);
  for (const SyscallSlot &s : slots)
    EXPECT_NE(s.probeIndex, kSyscallDispatchMinEvents + 2);
}

} // namespace
} // namespace sonde::probes::tracepoint
