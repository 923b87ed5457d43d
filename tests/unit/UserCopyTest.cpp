// The in-place copy routines (runtime/session/UserCopy.S) against a reference,
// next to a PROT_NONE page, with a SIGSEGV handler that does what the agent's
// does for them: resume a faulting load at its exception table's fixup.
#include "runtime/session/UserCopy.h"

#include <gtest/gtest.h>

#include <csignal>
#include <cstring>
#include <string>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

namespace sonde::test {
namespace {

void resumeAtFixup(int, siginfo_t *, void *context) {
  auto *uc = static_cast<ucontext_t *>(context);
  uintptr_t fixup = session::userCopyFixup(static_cast<uintptr_t>(uc->uc_mcontext.gregs[REG_RIP]));
  if (fixup == 0)
    std::abort(); // a fault outside the routines: the test's own bug
  uc->uc_mcontext.gregs[REG_RIP] = static_cast<greg_t>(fixup);
}

class UserCopyTest : public testing::Test {
protected:
  void SetUp() override {
    page_ = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    pages_ = static_cast<char *>(
        mmap(nullptr, 2 * page_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    ASSERT_NE(pages_, MAP_FAILED);
    ASSERT_EQ(mprotect(pages_ + page_, page_, PROT_NONE), 0);
    struct sigaction sa;
    std::memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = resumeAtFixup;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    ASSERT_EQ(sigaction(SIGSEGV, &sa, &previous_), 0);
  }
  void TearDown() override {
    sigaction(SIGSEGV, &previous_, nullptr);
    munmap(pages_, 2 * page_);
  }
  char *pageEnd() const { return pages_ + page_; }

  size_t page_ = 0;
  char *pages_ = nullptr;
  struct sigaction previous_;
};

// What sonde_user_copy_string must return for a readable [src, src + n).
long expectedLength(const char *src, size_t n) {
  const void *nul = std::memchr(src, '\0', n);
  return nul ? static_cast<const char *>(nul) - src : static_cast<long>(n);
}

TEST_F(UserCopyTest, StringsOfEveryLengthAndAlignmentUpToThePageEnd) {
  for (size_t length = 0; length <= 40; ++length) {
    for (size_t gap = 0; gap <= 9; ++gap) { // bytes between the text and the page end
      for (bool withNul : {true, false}) {
        if (!withNul && gap != 0)
          continue;
        size_t stored = length + (withNul ? 1 : 0);
        if (stored + gap == 0)
          continue;
        char *src = pageEnd() - gap - stored;
        std::memset(pages_, 'x', page_);
        for (size_t i = 0; i < length; ++i)
          src[i] = static_cast<char>('a' + i % 26);
        if (withNul)
          src[length] = '\0';
        size_t room = static_cast<size_t>(pageEnd() - src);
        for (size_t n : {size_t{1}, size_t{7}, size_t{8}, size_t{9}, length, length + 1, room}) {
          if (n == 0 || n > room)
            continue;
          std::string dst(n, '?');
          long got = sonde_user_copy_string(dst.data(), src, n);
          long want = expectedLength(src, n);
          ASSERT_EQ(got, want) << "length " << length << " gap " << gap << " n " << n;
          EXPECT_EQ(std::memcmp(dst.data(), src, static_cast<size_t>(want)), 0);
          if (want < static_cast<long>(n)) {
            EXPECT_EQ(dst[static_cast<size_t>(want)], '\0') << "the NUL is copied";
          }
        }
      }
    }
  }
}

TEST_F(UserCopyTest, StringInAnUnreadablePageFaults) {
  char dst[64];
  for (size_t n : {1, 7, 8, 9, 64})
    EXPECT_EQ(sonde_user_copy_string(dst, pageEnd(), n), -1) << n;
  EXPECT_EQ(sonde_user_copy_string(dst, nullptr, 8), -1);
  EXPECT_EQ(sonde_user_copy_string(dst, reinterpret_cast<const char *>(0xffffffff81000000ul), 8),
            -1);
  EXPECT_EQ(sonde_user_copy_string(dst, reinterpret_cast<const char *>(0x8000000000000000ul), 8),
            -1);
}

TEST_F(UserCopyTest, BlocksAreAllOrNothing) {
  for (size_t size = 1; size <= 16; ++size) {
    for (size_t before = 0; before <= 16; ++before) { // readable bytes before the guard
      char *src = pageEnd() - before;
      for (size_t i = 0; i < before; ++i)
        src[i] = static_cast<char>(i * 7 + size);
      char dst[16];
      long got = sonde_user_copy(dst, src, size);
      if (size <= before) {
        ASSERT_EQ(got, 0) << size << " " << before;
        EXPECT_EQ(std::memcmp(dst, src, size), 0);
      } else {
        ASSERT_EQ(got, -1) << size << " " << before;
      }
    }
  }
}

TEST_F(UserCopyTest, OnlyTheRoutinesLoadsHaveFixups) {
  EXPECT_EQ(session::userCopyFixup(reinterpret_cast<uintptr_t>(&expectedLength)), 0u);
  EXPECT_EQ(session::userCopyFixup(reinterpret_cast<uintptr_t>(&sonde_user_copy)), 0u)
      << "the length test before the load cannot fault";
  EXPECT_EQ(session::userCopyFixup(0), 0u);
}

} // namespace
} // namespace sonde::test
