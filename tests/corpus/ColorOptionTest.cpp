// --color (stap's rules): auto, the default, colours diagnostics on a terminal
// only; always colours a pipe too; never colours nothing.
#include "ProcessRunner.h"

#include <gtest/gtest.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <poll.h>
#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

namespace sonde::test {
namespace {

constexpr std::chrono::seconds kTimeout{30};
const std::string kBadScript = "probe begin { x = }"; // a parse error
const std::string kEscape = "\033[";

ProcessResult sondeOnPipes(std::vector<std::string> options) {
  options.insert(options.end(), {"-p1", "-e", kBadScript});
  return runProcess(SONDE_BINARY, options, std::filesystem::temp_directory_path().string(),
                    kTimeout);
}

// Runs sonde with its stdout and stderr on a pseudo-terminal (TERM=xterm) and
// returns what it wrote there.
std::string sondeOnTerminal(const std::vector<std::string> &options) {
  std::vector<std::string> args{SONDE_BINARY};
  args.insert(args.end(), options.begin(), options.end());
  args.insert(args.end(), {"-p1", "-e", kBadScript});
  int master = -1;
  pid_t pid = forkpty(&master, nullptr, nullptr, nullptr);
  if (pid < 0)
    return "forkpty failed";
  if (pid == 0) {
    setenv("TERM", "xterm", 1);
    std::vector<char *> argv;
    for (auto &a : args)
      argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  std::string text;
  auto deadline = std::chrono::steady_clock::now() + kTimeout;
  for (;;) {
    pollfd p{master, POLLIN, 0};
    if (poll(&p, 1, 1000) < 0 || std::chrono::steady_clock::now() > deadline)
      break;
    char buf[4096];
    ssize_t n = read(master, buf, sizeof buf);
    if (n <= 0) // EIO once the child has closed the terminal
      break;
    text.append(buf, static_cast<size_t>(n));
  }
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  close(master);
  return text;
}

TEST(ColorOption, AutoIsTheDefaultAndLeavesAPipePlain) {
  for (auto options : {std::vector<std::string>{}, std::vector<std::string>{"--color=auto"}}) {
    auto r = sondeOnPipes(options);
    EXPECT_EQ(r.exitCode, 1);
    EXPECT_NE(r.stderrText.find("parse error:"), std::string::npos) << r.stderrText;
    EXPECT_EQ(r.stderrText.find(kEscape), std::string::npos) << r.stderrText;
  }
}

TEST(ColorOption, AlwaysColoursAPipe) {
  for (auto option : {"--color", "--color=always", "--colour=always"}) {
    auto r = sondeOnPipes({option});
    EXPECT_EQ(r.exitCode, 1);
    EXPECT_NE(r.stderrText.find("\033[01;31mparse error:\033[m"), std::string::npos)
        << option << ": " << r.stderrText;
  }
}

TEST(ColorOption, NeverColoursNothing) {
  auto r = sondeOnPipes({"--color=never"});
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_EQ(r.stderrText.find(kEscape), std::string::npos) << r.stderrText;
  EXPECT_EQ(sondeOnTerminal({"--color=never"}).find(kEscape), std::string::npos);
}

TEST(ColorOption, AutoColoursATerminal) {
  std::string text = sondeOnTerminal({});
  EXPECT_NE(text.find("parse error:"), std::string::npos) << text;
  EXPECT_NE(text.find(kEscape), std::string::npos) << text;
  EXPECT_NE(sondeOnTerminal({"--color=auto"}).find(kEscape), std::string::npos);
}

TEST(ColorOption, BadWhenIsNamed) {
  auto r = runProcess(SONDE_BINARY, {"--color=sometimes", "-e", "probe begin {}"},
                      std::filesystem::temp_directory_path().string(), kTimeout);
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_EQ(r.stderrText,
            "sonde: option --color: expected always, never or auto, got 'sometimes'\n");
}

} // namespace
} // namespace sonde::test
