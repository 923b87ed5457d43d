// BpfObject against this machine's kernel: a program counting a child's
// close() calls on syscalls:sys_enter_close, globals set before load and read
// after, a program the verifier refuses, and malformed objects.
#include "probes/tracepoint/BpfObject.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <linux/capability.h>
#include <string>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

using sonde::probes::tracepoint::BpfObject;

namespace {

std::vector<uint8_t> fixture(const std::string &name) {
  std::ifstream in(std::string(KERNEL_FIXTURE_DIR) + "/" + name, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Skips the test (with the kernel's reason) where loading BPF is not permitted.
#define SKIP_UNLESS_PERMITTED(error)                                                               \
  if ((error).find("need root") != std::string::npos)                                              \
  GTEST_SKIP() << (error)

// A child that waits for a byte on `go`, then closes fd -1 `count` times and exits.
pid_t closingChild(int go, int count) {
  pid_t pid = fork();
  if (pid == 0) {
    char byte;
    if (read(go, &byte, 1) != 1)
      _exit(2);
    for (int i = 0; i < count; ++i)
      close(-1);
    _exit(0);
  }
  return pid;
}

TEST(BpfObject, CountsAChildsCloseCallsOnATracepoint) {
  std::vector<uint8_t> image = fixture("count_close.bpf.o");
  ASSERT_FALSE(image.empty());
  std::string error;
  auto object = BpfObject::open(image, "count_close", &error);
  ASSERT_TRUE(object) << error;

  int go[2];
  ASSERT_EQ(pipe(go), 0);
  pid_t child = closingChild(go[0], 1000);
  ASSERT_GT(child, 0);
  int pid = child;
  ASSERT_TRUE(object->setGlobal(".rodata", 0, &pid, sizeof pid, &error)) << error;
  bool loaded = object->load(&error) && object->attach({}, &error);
  if (!loaded) {
    kill(child, SIGKILL);
    waitpid(child, nullptr, 0);
    SKIP_UNLESS_PERMITTED(error);
    FAIL() << error;
  }
  ASSERT_EQ(write(go[1], "x", 1), 1);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  object->detach();
  close(go[0]);
  close(go[1]);

  unsigned long long closes = 0;
  long long lastFd = 0;
  ASSERT_TRUE(object->readGlobal(".bss", 0, &closes, sizeof closes, &error)) << error;
  ASSERT_TRUE(object->readGlobal(".bss", 8, &lastFd, sizeof lastFd, &error)) << error;
  EXPECT_EQ(closes, 1000u);
  // The tracepoint's fd field is an unsigned int: -1 arrives as 0xffffffff.
  EXPECT_EQ(lastFd, 0xffffffffLL);
  // Detached: more closes are not counted.
  close(-1);
  ASSERT_TRUE(object->readGlobal(".bss", 0, &closes, sizeof closes, &error)) << error;
  EXPECT_EQ(closes, 1000u);
}

TEST(BpfObject, VerifierRefusalNamesTheProgramAndQuotesTheVerifier) {
  std::string error;
  auto object = BpfObject::open(fixture("refused.bpf.o"), "refused", &error);
  ASSERT_TRUE(object) << error;
  ASSERT_FALSE(object->load(&error));
  SKIP_UNLESS_PERMITTED(error);
  EXPECT_NE(error.find("refused: the kernel's verifier refused program 'read_too_far':"),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("dereference of modified ctx ptr"), std::string::npos) << error;
}

TEST(BpfObject, GlobalsOutsideTheirSectionAreRefused) {
  std::string error;
  auto object = BpfObject::open(fixture("count_close.bpf.o"), "count_close", &error);
  ASSERT_TRUE(object) << error;
  long long value = 0;
  EXPECT_FALSE(object->setGlobal(".bss", 12, &value, sizeof value, &error));
  EXPECT_NE(error.find("outside .bss (16 bytes)"), std::string::npos) << error;
  EXPECT_FALSE(object->setGlobal(".data", 0, &value, sizeof value, &error));
  EXPECT_NE(error.find("no global section .data"), std::string::npos) << error;
  EXPECT_FALSE(object->readGlobal(".bss", 0, &value, sizeof value, &error));
  EXPECT_NE(error.find("not loaded"), std::string::npos) << error;
}

TEST(BpfObject, WithoutPrivilegesOneLineSaysWhatIsNeeded) {
  std::vector<uint8_t> image = fixture("count_close.bpf.o");
  int result[2];
  ASSERT_EQ(pipe(result), 0);
  pid_t child = fork();
  if (child == 0) {
    // Every capability dropped: what an ordinary user has.
    __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct none[_LINUX_CAPABILITY_U32S_3] = {};
    std::string error;
    if (syscall(SYS_capset, &header, none) != 0)
      error = "capset failed";
    else if (auto object = BpfObject::open(image, "count_close", &error); object)
      object->load(&error);
    (void)!write(result[1], error.data(), error.size());
    _exit(0);
  }
  close(result[1]);
  std::string error;
  char chunk[4096];
  for (ssize_t n; (n = read(result[0], chunk, sizeof chunk)) > 0;)
    error.append(chunk, static_cast<size_t>(n));
  close(result[0]);
  waitpid(child, nullptr, 0);
  EXPECT_EQ(error, "count_close: cannot load: kernel probes need root (CAP_BPF and CAP_PERFMON)");
}

TEST(BpfObject, MalformedObjectsAreRefused) {
  std::string error;
  std::vector<uint8_t> garbage(64, 0x42);
  EXPECT_FALSE(BpfObject::open(garbage, "garbage", &error));
  EXPECT_EQ(error.rfind("garbage: not a loadable BPF object", 0), 0u) << error;
  std::vector<uint8_t> cut = fixture("count_close.bpf.o");
  cut.resize(cut.size() / 3);
  EXPECT_FALSE(BpfObject::open(cut, "cut", &error));
  EXPECT_EQ(error.rfind("cut: not a loadable BPF object", 0), 0u) << error;
}

} // namespace
