// The segment's mailbox (SessionMailbox.h): requests in order, a full mailbox,
// a text too long for a slot, waiting until sonde has served, another process
// posting through its own mapping.
#include "ValuesTestSupport.h"

#include "runtime/values/SegmentFormat.h"
#include "runtime/values/SessionMailbox.h"

#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace sonde::values::test {
namespace {

TestState emptyState() { return makeState({scalar("n", ValueKind::Long)}); }

TEST(ValuesMailbox, RequestsComeOutInOrderAcrossRounds) {
  TestState st = emptyState();
  // Three rounds of the ring: slots are reused once taken.
  for (uint32_t i = 0; i < 3 * kMailboxSlots; ++i) {
    auto position = postMail(st.seg(), MailKind::Command, "cmd " + std::to_string(i), 0);
    ASSERT_TRUE(position.has_value()) << i;
    EXPECT_EQ(*position, i);
    std::optional<Mail> mail = takeMail(st.seg());
    ASSERT_TRUE(mail.has_value()) << i;
    EXPECT_EQ(mail->kind, MailKind::Command);
    EXPECT_EQ(mail->text, "cmd " + std::to_string(i));
    EXPECT_EQ(mail->position, i);
  }
  EXPECT_FALSE(takeMail(st.seg()).has_value());
}

TEST(ValuesMailbox, FullMailboxAndLongTextAreRefused) {
  TestState st = emptyState();
  for (uint32_t i = 0; i < kMailboxSlots; ++i)
    ASSERT_TRUE(postMail(st.seg(), MailKind::SwitchFile, "", 0).has_value()) << i;
  EXPECT_FALSE(postMail(st.seg(), MailKind::Command, "one too many", 0).has_value());
  EXPECT_FALSE(
      postMail(st.seg(), MailKind::Command, std::string(kMailboxText, 'x'), 0).has_value());
  EXPECT_FALSE(
      postMail(st.seg(), MailKind::Command, std::string(kMailboxText - 1, 'x'), 0).has_value())
      << "still full";
  ASSERT_TRUE(takeMail(st.seg()).has_value());
  markServed(st.seg());
  auto last = postMail(st.seg(), MailKind::Command, std::string(kMailboxText - 1, 'x'), 0);
  ASSERT_TRUE(last.has_value());
  EXPECT_EQ(*last, kMailboxSlots);
}

TEST(ValuesMailbox, PosterWaitsUntilServed) {
  TestState st = emptyState();
  uint32_t seen = postedCount(st.seg());
  auto position = postMail(st.seg(), MailKind::SwitchFile, "", 0);
  ASSERT_TRUE(position.has_value());
  EXPECT_NE(postedCount(st.seg()), seen);
  EXPECT_FALSE(waitServed(st.seg(), *position, 10));
  std::thread sonde([&] {
    ASSERT_TRUE(takeMail(st.seg()).has_value());
    markServed(st.seg());
  });
  EXPECT_TRUE(waitServed(st.seg(), *position, 10000));
  sonde.join();
}

TEST(ValuesMailbox, AnotherProcessPostsThroughItsMapping) {
  TestState st = emptyState();
  int fd = st.segment.fd();
  uint64_t fingerprint = st.layout.fingerprint();
  pid_t pid = fork();
  if (pid == 0) {
    auto mine = Segment::attach(fd, fingerprint, nullptr);
    _exit(mine && postMail(mine->abi(), MailKind::Command, "from the child", 0) ? 0 : 1);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  std::optional<Mail> mail = takeMail(st.seg());
  ASSERT_TRUE(mail.has_value());
  EXPECT_EQ(mail->text, "from the child");
}

} // namespace
} // namespace sonde::values::test
