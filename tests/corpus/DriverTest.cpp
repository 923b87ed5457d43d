// The `sonde` command line end to end: the real binary, its output and status.
#include "ProcessRunner.h"

#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

namespace sonde::test {
namespace {

constexpr std::chrono::seconds kTimeout{30};

ProcessResult sonde(const std::vector<std::string> &args) {
  return runProcess(SONDE_BINARY, args, std::filesystem::temp_directory_path().string(), kTimeout);
}

TEST(Driver, HelpAndVersionExitZero) {
  auto help = sonde({"--help"});
  EXPECT_EQ(help.exitCode, 0);
  EXPECT_EQ(help.stdoutText.rfind("Usage: sonde [OPTIONS] FILE [ARGS...]", 0), 0u);
  auto version = sonde({"-V"});
  EXPECT_EQ(version.exitCode, 0);
  EXPECT_EQ(version.stdoutText.rfind("Sonde ", 0), 0u) << version.stdoutText;
}

TEST(Driver, InlineScriptPrintsParsedForm) {
  auto r = sonde({"-p1", "-e", "probe begin { printf(\"hi %s\\n\", @1) }", "world"});
  EXPECT_EQ(r.exitCode, 0) << r.stderrText;
  EXPECT_EQ(r.stdoutText, "# parse tree dump\n# file <input>\nprobe begin {\n"
                          "  printf(\"hi %s\\n\", \"world\");\n}\n");
  EXPECT_EQ(r.stderrText, "");
}

TEST(Driver, ElaborationPrintsInferredTypes) {
  auto r = sonde({"-p2", "-e", "global n; probe timer.ms(10) { n++; if (n > 3) exit() }"});
  EXPECT_EQ(r.exitCode, 0) << r.stderrText;
  EXPECT_EQ(r.stdoutText, "# globals\nn:long\n# probes\ntimer.ms(10) /* <- timer.ms(10) */\n");
}

TEST(Driver, ParseErrorFailsPassOne) {
  auto r = sonde({"-p2", "-e", "probe begin { x = (1 }"});
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_NE(r.stderrText.find("parse error: "), std::string::npos) << r.stderrText;
  EXPECT_NE(r.stderrText.find("Pass 1: parse failed.  [man error::pass1]\n"), std::string::npos);
}

TEST(Driver, SemanticErrorFailsPassTwo) {
  auto r = sonde({"-p2", "-e", "probe begin { println(execnme()) }"});
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_NE(r.stderrText.find("(similar: execname"), std::string::npos) << r.stderrText;
  EXPECT_NE(r.stderrText.find("Pass 2: analysis failed.  [man error::pass2]\n"), std::string::npos);
}

TEST(Driver, MissingScriptFileIsNamed) {
  auto r = sonde({"-p1", "/nonexistent/app.probe"});
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_EQ(r.stderrText,
            "sonde: cannot open script file '/nonexistent/app.probe': No such file or directory\n");
}

TEST(Driver, BadOptionIsNamed) {
  auto r = sonde({"--mode=lossy", "-e", "probe begin {}"});
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_EQ(r.stderrText,
            "sonde: option --mode: expected block, discard or overwrite, got 'lossy'\n");
}

TEST(Driver, UnknownLimitDrawsAWarning) {
  auto r = sonde({"-p2", "-D", "MAXFOO=3", "-e", "probe begin {}"});
  EXPECT_EQ(r.exitCode, 0);
  EXPECT_EQ(r.stderrText, "WARNING: unknown -D name 'MAXFOO' ignored\n");
}

// stap scripts' headers pass -d/--ldd/--all-modules: accepted; -v says why
// they change nothing, quietly otherwise.
TEST(Driver, SymbolDataOptionsAreAcceptedAndExplainedUnderVerbose) {
  auto quiet = sonde({"-p2", "-d", "/bin/ls", "--ldd", "--all-modules", "-e", "probe begin {}"});
  EXPECT_EQ(quiet.exitCode, 0) << quiet.stderrText;
  EXPECT_EQ(quiet.stderrText, "");
  auto verbose = sonde({"-v", "-p1", "-d", "/bin/ls", "-d", "kernel", "--ldd", "--all-modules",
                        "-e", "probe begin {}"});
  EXPECT_EQ(verbose.exitCode, 0) << verbose.stderrText;
  EXPECT_EQ(
      verbose.stderrText.rfind("sonde: -d: not needed, symbols are read on demand\n"
                               "sonde: --ldd: not needed, symbols are read on demand\n"
                               "sonde: --all-modules: not needed, symbols are read on demand\n",
                               0),
      0u)
      << verbose.stderrText;
}

TEST(Driver, RunsAScript) {
  auto r = sonde({"-e", "probe begin { printf(\"hello %s\\n\", \"world\"); exit() }"});
  EXPECT_EQ(r.exitCode, 0) << r.stderrText;
  EXPECT_EQ(r.stdoutText, "hello world\n");
  EXPECT_EQ(r.stderrText, "");
}

TEST(Driver, UnavailableRunOptionsAreNamedNotIgnored) {
  auto r = sonde({"--suppress-handler-errors", "-e", "probe begin { exit() }"});
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_EQ(r.stderrText, "sonde: option --suppress-handler-errors is not supported by this "
                          "build yet\n");
}

// sonde's own probes write records too: begin, timer and end output in order,
// through either record transport, then the transport's summary.
TEST(Driver, RecordTransportsCarrySondesOwnOutput) {
  const char *script = "global n probe begin { printf(\"begin %d\\n\", 1) } "
                       "probe timer.ms(10) { if (++n == 3) exit() } "
                       "probe end { printf(\"n=%d at %d\\n\", n, gettimeofday_ns() > 0); "
                       "println(\"bye\") }";
  for (const char *transport : {"--transport=relay", "--transport=netlink"}) {
    auto r = sonde({transport, "-e", script});
    EXPECT_EQ(r.exitCode, 0) << transport << r.stderrText;
    EXPECT_EQ(r.stdoutText, "begin 1\nn=3 at 1\nbye\n") << transport;
    EXPECT_NE(
        r.stderrText.find(std::string(transport + 12) + " transport (block mode): 3 records, "),
        std::string::npos)
        << r.stderrText;
  }
}

// -c: a command that cannot run is refused before any probe runs.
TEST(Driver, CommandsThatCannotRunAreNamed) {
  const char *script = "probe begin { println(\"begin\") }";
  auto missing = sonde({"-e", script, "-c", "no_such_program_anywhere --flag"});
  EXPECT_EQ(missing.exitCode, 1);
  EXPECT_EQ(missing.stdoutText, "");
  EXPECT_EQ(missing.stderrText, "sonde: -c 'no_such_program_anywhere --flag': cannot run "
                                "'no_such_program_anywhere': not found in $PATH\n");
  auto directory = sonde({"-e", script, "-c", "/tmp"});
  EXPECT_EQ(directory.stderrText, "sonde: -c '/tmp': cannot run '/tmp': it is a directory\n");
  auto shell = sonde({"-e", script, "-c", "true; false"});
  EXPECT_EQ(shell.exitCode, 1);
  EXPECT_EQ(shell.stderrText, "sonde: -c 'true; false': cannot run the command: it contains an "
                              "unquoted |, &, ;, <, >, (, ), { or }\n");
  auto quotes = sonde({"-e", script, "-c", "echo \"open"});
  EXPECT_EQ(quotes.stderrText,
            "sonde: -c 'echo \"open': cannot run the command: unbalanced quotes\n");
}

// -c: target() is the command's pid from the begin probes on; its exit ends the run.
TEST(Driver, CommandRunsAndEndsTheSession) {
  auto r = sonde({"-e",
                  "probe begin { printf(\"%d\\n\", target() > 0) } probe end { "
                  "println(\"end\") }",
                  "-c", "sh -c 'echo from-target; exit 3'", "--target-status"});
  EXPECT_EQ(r.exitCode, 3) << r.stderrText;
  EXPECT_EQ(r.stdoutText, "1\nfrom-target\nend\n");
  EXPECT_EQ(r.stderrText, "");
}

// Ctrl-C ends a run like exit(): end probes run, output is flushed, status 0.
TEST(Driver, InterruptRunsEndProbes) {
  int out[2];
  ASSERT_EQ(pipe(out), 0);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    dup2(out[1], STDOUT_FILENO);
    close(out[0]);
    execl(SONDE_BINARY, SONDE_BINARY, "-e",
          "global n; probe begin { println(\"started\") } probe timer.ms(5) { n++ }\n"
          "probe end { printf(\"end %d\\n\", n > 0) }",
          static_cast<char *>(nullptr));
    _exit(127);
  }
  close(out[1]);
  // Wait for the begin probe's line, let the timer tick, then interrupt.
  std::string text;
  char buf[256];
  pollfd p{out[0], POLLIN, 0};
  while (text.find("started\n") == std::string::npos && poll(&p, 1, 30000) > 0) {
    ssize_t n = read(out[0], buf, sizeof buf);
    if (n <= 0)
      break;
    text.append(buf, static_cast<size_t>(n));
  }
  usleep(200 * 1000);
  kill(pid, SIGINT);
  for (ssize_t n; (n = read(out[0], buf, sizeof buf)) > 0;)
    text.append(buf, static_cast<size_t>(n));
  close(out[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_EQ(text, "started\nend 1\n");
}

} // namespace
} // namespace sonde::test
