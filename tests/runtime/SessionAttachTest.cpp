// The pieces of -x that need no target: the contract's text and its passage
// with descriptors over a socket, and the executable check.
#include "runtime/session/AgentHandshake.h"
#include "runtime/session/AgentReportLines.h"
#include "runtime/session/AttachedProcess.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <elf.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

namespace sonde::session {
namespace {

AgentContract sampleContract() {
  AgentContract c;
  c.module = "/tmp/sondeXYZ/module.so";
  c.consumerPid = 4242;
  return c;
}

TEST(AgentContractText, RoundTripsEveryField) {
  AgentContract c = sampleContract();
  c.netlinkFd = 0;
  c.netlinkConfig = "subbuf=4096,mode=block";
  std::string error;
  auto back = decodeContractText(encodeContractText(c), &error);
  ASSERT_TRUE(back) << error;
  EXPECT_EQ(back->module, c.module);
  EXPECT_EQ(back->consumerPid, 4242);
  EXPECT_EQ(back->netlinkConfig, c.netlinkConfig);
  EXPECT_GE(back->netlinkFd, 0);
  EXPECT_LT(back->relayFd, 0);
}

TEST(AgentContractText, MalformedTextIsRefusedWithAReason) {
  std::string error;
  EXPECT_FALSE(decodeContractText("consumer=1\n", &error));
  EXPECT_EQ(error, "the contract names no module");
  EXPECT_FALSE(decodeContractText("module=/m.so\nconsumer=x1\n", &error));
  EXPECT_EQ(error, "malformed consumer pid 'x1'");
  EXPECT_FALSE(decodeContractText("module=/m.so\ncolour=blue\n", &error));
  EXPECT_EQ(error, "unknown contract key 'colour'");
  EXPECT_FALSE(decodeContractText("module=/m.so", &error));
  EXPECT_EQ(error, "the contract's last line is not terminated");
  EXPECT_FALSE(decodeContractText("module=/m.so\nrelay=1\nnetlink=x\n", &error));
  EXPECT_EQ(error, "the contract names two transports");
}

// Each received descriptor is a new one for the same open file.
TEST(AgentContractSocket, DescriptorsArriveInTheirPlaces) {
  int pair[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair), 0);
  int files[5];
  for (int &fd : files) {
    char name[] = "/tmp/sonde-contract-XXXXXX";
    fd = mkstemp(name);
    ASSERT_GE(fd, 0);
    unlink(name);
  }
  AgentContract c = sampleContract();
  c.segmentFd = files[0];
  c.outputFd = files[1];
  c.errorFd = files[2];
  c.relayFd = files[3];
  c.moduleFd = files[4];
  std::string error;
  ASSERT_TRUE(sendAgentContract(pair[0], c, &error)) << error;
  auto got = receiveAgentContract(pair[1], &error);
  ASSERT_TRUE(got) << error;
  EXPECT_EQ(got->module, c.module);
  auto sameFile = [](int a, int b) {
    struct stat sa, sb;
    return fstat(a, &sa) == 0 && fstat(b, &sb) == 0 && sa.st_ino == sb.st_ino &&
           sa.st_dev == sb.st_dev;
  };
  EXPECT_TRUE(sameFile(got->segmentFd, files[0]));
  EXPECT_TRUE(sameFile(got->outputFd, files[1]));
  EXPECT_TRUE(sameFile(got->errorFd, files[2]));
  EXPECT_TRUE(sameFile(got->relayFd, files[3]));
  EXPECT_TRUE(sameFile(got->moduleFd, files[4])) << "-x: the module's sealed copy";
  EXPECT_EQ(got->netlinkFd, -1);
  EXPECT_TRUE(fcntl(got->segmentFd, F_GETFD) & FD_CLOEXEC);
  for (int fd : {got->segmentFd, got->outputFd, got->errorFd, got->relayFd, got->moduleFd})
    close(fd);
  for (int fd : files)
    close(fd);
  close(pair[0]);
  EXPECT_FALSE(receiveAgentContract(pair[1], &error));
  EXPECT_EQ(error, "sonde closed the connection before sending the contract");
  close(pair[1]);
}

// An ELF header for `machine`, written to a temporary file.
std::string elfFile(uint16_t machine, unsigned char elfClass) {
  char name[] = "/tmp/sonde-elf-XXXXXX";
  int fd = mkstemp(name);
  Elf64_Ehdr eh{};
  std::memcpy(eh.e_ident, ELFMAG, SELFMAG);
  eh.e_ident[EI_CLASS] = elfClass;
  eh.e_machine = machine;
  (void)!write(fd, &eh, sizeof eh);
  close(fd);
  return name;
}

TEST(AttachTargetCheck, OnlyX86_64ProgramsTakeTheAgent) {
  std::string x86 = elfFile(EM_X86_64, ELFCLASS64), arm = elfFile(EM_AARCH64, ELFCLASS64),
              i386 = elfFile(EM_386, ELFCLASS32);
  EXPECT_EQ(whyNotX86_64(x86), "");
  EXPECT_EQ(whyNotX86_64(arm),
            "it is not an x86-64 program (sonde's agent runs only in x86-64 processes)");
  EXPECT_EQ(whyNotX86_64(i386), whyNotX86_64(arm));
  EXPECT_EQ(whyNotX86_64("/proc/self/status"), "its executable is not an ELF file");
  EXPECT_EQ(whyNotX86_64("/nonexistent/sonde"),
            "cannot read its executable: No such file or directory");
  for (const auto &f : {x86, arm, i386})
    unlink(f.c_str());
}

} // namespace
} // namespace sonde::session

namespace sonde::session {
namespace {

// What a traced process writes where agents report is taken in bounded
// pieces: a flood neither keeps sonde reading nor makes it hold more.
TEST(AgentReportLines, FloodsAreTakenInBoundedPiecesAndLongLinesCut) {
  int p[2];
  ASSERT_EQ(pipe2(p, O_CLOEXEC | O_NONBLOCK), 0);
  fcntl(p[1], F_SETPIPE_SZ, 1 << 20);
  std::string flood(200000, 'x');
  ASSERT_EQ(write(p[1], flood.data(), flood.size()), static_cast<ssize_t>(flood.size()));
  AgentReportLines lines;
  EXPECT_TRUE(lines.readFrom(p[0]));
  EXPECT_FALSE(lines.next()) << "no line ended yet";
  char left[256 * 1024];
  ssize_t rest = read(p[0], left, sizeof left);
  EXPECT_GE(rest, static_cast<ssize_t>(200000 - 64 * 1024)) << "at most 64 KiB a call";
  ASSERT_EQ(write(p[1], "\nready\n", 7), 7);
  EXPECT_TRUE(lines.readFrom(p[0]));
  std::optional<std::string> first = lines.next();
  ASSERT_TRUE(first);
  EXPECT_EQ(*first, std::string(4096, 'x')) << "a line is cut at 4 KiB";
  EXPECT_EQ(lines.next(), std::optional<std::string>("ready"));
  close(p[1]);
  EXPECT_FALSE(lines.readFrom(p[0])) << "EOF";
  close(p[0]);
}

} // namespace
} // namespace sonde::session
