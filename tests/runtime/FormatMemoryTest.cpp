// %m and %M: memory read through the caller's reader, and stap's errors.
#include "FormatTestSupport.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>

using sonde::test::FormatOutcome;
using sonde::test::runFormat;

namespace {

// A fake address space: 16 readable bytes "ABCDEFGHIJKLMNOP" at 0x1000.
struct FakeMemory {
  static constexpr uint64_t kBase = 0x1000;
  const char bytes[17] = "ABCDEFGHIJKLMNOP";
  int lastUser = -1;
  int reads = 0;

  static int read(void *context, uint64_t addr, void *dst, size_t n, int user) {
    auto *self = static_cast<FakeMemory *>(context);
    self->lastUser = user;
    ++self->reads;
    if (addr < kBase || addr + n > kBase + 16)
      return -1;
    std::memcpy(dst, self->bytes + (addr - kBase), n);
    return 0;
  }
  SondeMemoryReader reader() { return SondeMemoryReader{&FakeMemory::read, this}; }
};

FormatOutcome print(std::string_view fmt, std::initializer_list<sonde::test::FmtArg> args,
                    FakeMemory &memory, bool sprint = false) {
  const SondeMemoryReader reader = memory.reader();
  return runFormat(fmt, args, sprint, SONDE_PRINT_BUFFER_SIZE, &reader);
}

TEST(FormatMemory, RawBytes) {
  FakeMemory m;
  EXPECT_EQ(print("[%m]", {0x1000}, m).text, "[A]"); // one byte by default
  EXPECT_EQ(print("[%.5m]", {0x1001}, m).text, "[BCDEF]");
  EXPECT_EQ(print("[%8.3m][%-8.3m]", {0x1000, 0x1000}, m).text, "[     ABC][ABC     ]");
  EXPECT_EQ(print("[%.*m]", {4, 0x100c}, m).text, "[MNOP]");
  EXPECT_EQ(m.lastUser, 0);
  EXPECT_EQ(print("[%#.2m]", {0x1000}, m).text, "[AB]");
  EXPECT_EQ(m.lastUser, 1); // '#' reads user memory
}

TEST(FormatMemory, HexDump) {
  FakeMemory m;
  EXPECT_EQ(print("%M", {0x1000}, m).text, "41");
  EXPECT_EQ(print("%.16M", {0x1000}, m).text, "4142434445464748494a4b4c4d4e4f50");
  EXPECT_EQ(print("[%8.2M][%-8.2M]", {0x1000, 0x1000}, m).text, "[    4142][4142    ]");
}

TEST(FormatMemory, ZeroFlagAppendsNul) {
  FakeMemory m;
  EXPECT_EQ(print("%0.2m|", {0x1000}, m).text, std::string("AB\0|", 4));
}

TEST(FormatMemory, FaultReportsTheFirstUnreadableByte) {
  FakeMemory m;
  FormatOutcome o = print("ok %.4m", {0x100e}, m);
  EXPECT_EQ(o.text, ""); // stap drops the whole print
  EXPECT_EQ(o.error, "read fault [man error::fault] at 0x1010");
  o = print("%.4M", {0x2000}, m, true);
  EXPECT_EQ(o.text, "");
  EXPECT_EQ(o.error, "read fault [man error::fault] at 0x2000");
}

TEST(FormatMemory, NoReaderFaults) {
  FormatOutcome o = runFormat("%m", {0x1000}, false, 64, nullptr);
  EXPECT_EQ(o.text, "");
  EXPECT_EQ(o.error, "read fault [man error::fault] at 0x1000");
}

TEST(FormatMemory, DumpsAreLimitedToAPage) {
  FakeMemory m;
  EXPECT_EQ(print("%.4096M", {0x1000}, m).error, "read fault [man error::fault] at 0x1010");
  FormatOutcome o = print("%.4097m", {0x1000}, m);
  EXPECT_EQ(o.text, "");
  EXPECT_EQ(o.error, "4097 is too many bytes for a memory dump");
  EXPECT_EQ(print("%.*M", {5000, 0x1000}, m).error, "5000 is too many bytes for a memory dump");
  // stap checks every size before printing: the size error wins over an
  // earlier conversion's read fault.
  const int readsBefore = m.reads;
  EXPECT_EQ(print("%.2m %.9999m", {0x0, 0x1000}, m).error,
            "9999 is too many bytes for a memory dump");
  EXPECT_GT(m.reads, readsBefore);
}

TEST(FormatMemory, ReadsOnlyWhatFits) {
  FakeMemory m;
  const SondeMemoryReader reader = m.reader();
  // 3 bytes of room: %m reads 3 of 8 bytes (the unreadable rest is never touched).
  EXPECT_EQ(runFormat("%.8m", {0x100d}, false, 3, &reader).text, "NOP");
  // %M needs two characters per byte: 5 bytes of room show 2 bytes.
  EXPECT_EQ(runFormat("%.8M", {0x100e}, false, 5, &reader).text, "4f50");
}

} // namespace
