// sonde -x PID and process(PID): the agent loaded into a running process
// (e2e_attach), its markers fired with the right values, and every detach
// (exit(), Ctrl-C, sonde killed) leaving the process running as before, over
// repeated attach/detach cycles and under load.
#include "SondeRun.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <dirent.h>
#include <fcntl.h>
#include <filesystem>
#include <poll.h>
#include <sstream>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace sonde::e2e {
namespace {

using namespace std::chrono_literals;

// Starts `program` with `args` (argv[1..]), its stdout into a pipe whose read
// end goes to *out; returns its pid (-1 if it could not start).
pid_t spawnWithStdoutPipe(const std::string &program, std::vector<std::string> args, int *out) {
  int pipeFds[2];
  if (pipe2(pipeFds, O_CLOEXEC) != 0)
    return -1;
  pid_t pid = fork();
  if (pid == 0) {
    dup2(pipeFds[1], STDOUT_FILENO);
    std::vector<char *> argv{const_cast<char *>(program.c_str())};
    for (auto &a : args)
      argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(program.c_str(), argv.data());
    _exit(127);
  }
  close(pipeFds[1]);
  *out = pipeFds[0];
  return pid;
}

// e2e_attach running on its own (not sonde's child), its stdout in a pipe.
class RunningTarget {
public:
  explicit RunningTarget(int threads, const std::string &program = E2E_ATTACH,
                         std::vector<std::string> args = {}) {
    if (args.empty())
      args = {std::to_string(threads)};
    pid_ = spawnWithStdoutPipe(program, std::move(args), &out_);
  }
  ~RunningTarget() {
    if (pid_ > 0 && !reaped_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    if (out_ >= 0)
      close(out_);
  }
  pid_t pid() const { return pid_; }
  std::string pidText() const { return std::to_string(pid_); }

  // Waits for a line equal to `line` (5 s).
  bool waitFor(const std::string &line) {
    auto deadline = std::chrono::steady_clock::now() + 5s;
    while (std::chrono::steady_clock::now() < deadline) {
      size_t nl;
      while ((nl = text_.find('\n', scanned_)) != std::string::npos) {
        std::string got = text_.substr(scanned_, nl - scanned_);
        scanned_ = nl + 1;
        if (got == line)
          return true;
      }
      pollfd p{out_, POLLIN, 0};
      if (poll(&p, 1, 100) > 0) {
        char buf[4096];
        ssize_t n = read(out_, buf, sizeof buf);
        if (n <= 0)
          return false;
        text_.append(buf, static_cast<size_t>(n));
      }
    }
    return false;
  }

  // SIGTERM, then everything it printed and its exit status.
  std::pair<std::string, int> stop() {
    kill(pid_, SIGTERM);
    char buf[4096];
    ssize_t n;
    while ((n = read(out_, buf, sizeof buf)) > 0)
      text_.append(buf, static_cast<size_t>(n));
    int status = 0;
    waitpid(pid_, &status, 0);
    reaped_ = true;
    return {text_, WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status)};
  }

  // Threads, open descriptors and mappings of the module: what an attach must
  // not leave behind.
  std::string footprint() const {
    auto count = [](const std::string &dir) {
      int n = 0;
      if (DIR *d = opendir(dir.c_str())) {
        while (dirent *e = readdir(d))
          n += e->d_name[0] != '.';
        closedir(d);
      }
      return n;
    };
    std::string proc = "/proc/" + pidText();
    std::string maps = readFile(proc + "/maps");
    size_t modules = 0;
    for (size_t at = 0; (at = maps.find("module.so", at)) != std::string::npos; ++at)
      ++modules;
    return "threads " + std::to_string(count(proc + "/task")) + ", fds " +
           std::to_string(count(proc + "/fd")) + ", modules mapped " + std::to_string(modules) +
           ", code " + (codeAsInFile() ? "as in its file" : "CHANGED");
  }

  // The footprint once it is back to `before`, or as it is after `limit`: the
  // agent's thread ends and the module goes shortly after sonde detaches.
  std::string settledFootprint(const std::string &before,
                               std::chrono::milliseconds limit = 2s) const {
    auto deadline = std::chrono::steady_clock::now() + limit;
    std::string now = footprint();
    while (now != before && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(10ms);
      now = footprint();
    }
    return now;
  }

  // Whether the executable's code in memory equals its file: every byte the
  // agent patched (5-byte NOPs, int3s) is back.
  bool codeAsInFile() const {
    std::string proc = "/proc/" + pidText();
    std::string exe = std::filesystem::canonical(proc + "/exe").string();
    std::istringstream maps(readFile(proc + "/maps"));
    std::string line;
    bool checked = false;
    while (std::getline(maps, line)) {
      unsigned long start = 0, end = 0, offset = 0;
      char perms[8] = {};
      if (std::sscanf(line.c_str(), "%lx-%lx %7s %lx", &start, &end, perms, &offset) != 4 ||
          perms[2] != 'x' || line.size() < exe.size() ||
          line.compare(line.size() - exe.size(), exe.size(), exe) != 0)
        continue;
      std::string memory(end - start, '\0'), file(end - start, '\0');
      int mem = open((proc + "/mem").c_str(), O_RDONLY | O_CLOEXEC);
      int elf = open(exe.c_str(), O_RDONLY | O_CLOEXEC);
      ssize_t m = pread(mem, memory.data(), memory.size(), static_cast<off_t>(start));
      ssize_t f = pread(elf, file.data(), file.size(), static_cast<off_t>(offset));
      close(mem);
      close(elf);
      // The last page may extend past the end of the file: compare what both have.
      size_t n = static_cast<size_t>(std::min(m, f));
      if (m <= 0 || f <= 0 || memory.compare(0, n, file, 0, n) != 0)
        return false;
      checked = true;
    }
    return checked;
  }

private:
  pid_t pid_ = -1;
  int out_ = -1;
  bool reaped_ = false;
  std::string text_;
  size_t scanned_ = 0;
};

// What every attached run prints at its end: how many threads fired each
// marker, how many values were wrong, and target().
const char *kCountingScript = R"(
global seen, stock, wrong
probe process.provider("attach").mark("tick") {
  seen[$arg1] <<< 1
  if ($arg3 != $arg2 * 7) wrong++
}
probe process.provider("attach_stock").mark("tick") { stock[$arg1] <<< 1 }
probe timer.ms(MS) { exit() }
probe end {
  n = 0; foreach (k in seen) n++
  s = 0; foreach (k in stock) s++
  printf("threads %d stock %d wrong %d target %d\n", n, s, wrong, target())
}
)";

std::string countingScript(int ms) {
  std::string s = kCountingScript;
  s.replace(s.find("MS"), 2, std::to_string(ms));
  return s;
}

test::ProcessResult attach(const std::string &script, const std::vector<std::string> &options,
                           const std::string &dir) {
  std::vector<std::string> args = options;
  args.insert(args.end(), {"-e", script});
  return test::runProcess(SONDE_BINARY, args, dir, 60s);
}

std::string describe(const test::ProcessResult &r) {
  return r.describe() + "\nstdout:\n" + r.stdoutText + "stderr:\n" + r.stderrText;
}

void expectAllThreadsOk(RunningTarget &target, int threads) {
  auto [text, status] = target.stop();
  EXPECT_EQ(status, 0) << text;
  for (int k = 0; k < threads; ++k)
    EXPECT_NE(text.find("thread " + std::to_string(k) + ": ok\n"), std::string::npos) << text;
}

TEST(Attach, MarkersOfARunningProcessFireWithTheirValues) {
  ScratchDir dir;
  RunningTarget target(4);
  ASSERT_TRUE(target.waitFor("ready"));
  std::string before = target.footprint();
  auto r = attach(countingScript(300), {"-x", target.pidText()}, dir.path());
  ASSERT_TRUE(r.exited && r.exitCode == 0) << describe(r);
  EXPECT_EQ(r.stdoutText, "threads 4 stock 4 wrong 0 target " + target.pidText() + "\n")
      << describe(r);
  // The agent's thread has gone and the module is unmapped; the agent itself stays.
  EXPECT_EQ(target.settledFootprint(before), before);
  expectAllThreadsOk(target, 4);
}

TEST(Attach, ProcessPidNamesTheProcessWithoutX) {
  ScratchDir dir;
  RunningTarget target(2);
  ASSERT_TRUE(target.waitFor("ready"));
  std::string script =
      "probe process(" + target.pidText() +
      R"().provider("attach").mark("tick") { if ($arg1 == 1) { printf("%d %d\n", target(), $arg3 == $arg2 * 7); exit() } })";
  auto r = attach(script, {}, dir.path());
  ASSERT_TRUE(r.exited && r.exitCode == 0) << describe(r);
  EXPECT_EQ(r.stdoutText, target.pidText() + " 1\n") << describe(r);
  expectAllThreadsOk(target, 2);
}

TEST(Attach, TenCyclesLeaveTheProcessAsItWas) {
  ScratchDir dir;
  RunningTarget target(4);
  ASSERT_TRUE(target.waitFor("ready"));
  std::string before = target.footprint();
  for (int cycle = 0; cycle < 10; ++cycle) {
    auto r = attach(countingScript(100), {"-x", target.pidText()}, dir.path());
    ASSERT_TRUE(r.exited && r.exitCode == 0) << "cycle " << cycle << ": " << describe(r);
    EXPECT_EQ(r.stdoutText, "threads 4 stock 4 wrong 0 target " + target.pidText() + "\n")
        << "cycle " << cycle;
  }
  EXPECT_EQ(target.settledFootprint(before), before);
  expectAllThreadsOk(target, 4);
}

// Four threads fire continuously while sonde attaches and detaches 100 times:
// every run sees right values, the process never sees a wrong one.
TEST(Attach, HundredCyclesUnderLoad) {
  ScratchDir dir;
  RunningTarget target(4);
  ASSERT_TRUE(target.waitFor("ready"));
  for (int cycle = 0; cycle < 100; ++cycle) {
    auto r = attach(countingScript(10), {"-x", target.pidText()}, dir.path());
    ASSERT_TRUE(r.exited && r.exitCode == 0) << "cycle " << cycle << ": " << describe(r);
    ASSERT_NE(r.stdoutText.find(" wrong 0 target " + target.pidText()), std::string::npos)
        << "cycle " << cycle << ": " << describe(r);
  }
  expectAllThreadsOk(target, 4);
}

// sonde running attached in the background, stopped by a signal.
class BackgroundSonde {
public:
  BackgroundSonde(const std::string &script, const std::vector<std::string> &options) {
    std::vector<std::string> args = options;
    args.insert(args.end(), {"-e", script});
    pid_ = spawnWithStdoutPipe(SONDE_BINARY, std::move(args), &out_);
  }
  ~BackgroundSonde() {
    if (pid_ > 0)
      kill(pid_, SIGKILL), waitpid(pid_, nullptr, 0);
    if (out_ >= 0)
      close(out_);
  }
  // Waits (30 s: the machine may be busy) until it printed `text`.
  bool printed(const std::string &text) {
    auto deadline = std::chrono::steady_clock::now() + 30s;
    while (output_.find(text) == std::string::npos && std::chrono::steady_clock::now() < deadline) {
      pollfd p{out_, POLLIN, 0};
      if (poll(&p, 1, 100) > 0) {
        char buf[1024];
        ssize_t n = read(out_, buf, sizeof buf);
        if (n <= 0)
          break;
        output_.append(buf, static_cast<size_t>(n));
      }
    }
    return output_.find(text) != std::string::npos;
  }
  int stop(int sig) {
    kill(pid_, sig);
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
    return status;
  }

private:
  pid_t pid_ = -1;
  int out_ = -1;
  std::string output_;
};

const char *kAnnounceScript = R"(
global said
probe process.provider("attach").mark("tick") { if (!said) { said = 1; println("attached") } }
)";

TEST(Attach, KilledSondeDetachesAndTheNextAttachWorks) {
  ScratchDir dir;
  RunningTarget target(4);
  ASSERT_TRUE(target.waitFor("ready"));
  std::string before = target.footprint();
  {
    BackgroundSonde sonde(kAnnounceScript, {"-x", target.pidText()});
    ASSERT_TRUE(sonde.printed("attached"));
    EXPECT_FALSE(target.codeAsInFile()) << "attached, the markers are patched";
    sonde.stop(SIGKILL);
  }
  EXPECT_EQ(target.settledFootprint(before, 5s), before)
      << "the agent did not detach when sonde died";
  auto r = attach(countingScript(100), {"-x", target.pidText()}, dir.path());
  ASSERT_TRUE(r.exited && r.exitCode == 0) << describe(r);
  EXPECT_EQ(r.stdoutText, "threads 4 stock 4 wrong 0 target " + target.pidText() + "\n");
  expectAllThreadsOk(target, 4);
}

TEST(Attach, InterruptDetachesAndRunsEndProbes) {
  RunningTarget target(2);
  ASSERT_TRUE(target.waitFor("ready"));
  BackgroundSonde sonde(std::string(kAnnounceScript) + R"(probe end { println("end ran") })",
                        {"-x", target.pidText()});
  ASSERT_TRUE(sonde.printed("attached"));
  int status = sonde.stop(SIGINT);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_TRUE(sonde.printed("end ran"));
  expectAllThreadsOk(target, 2);
}

TEST(Attach, ListingNamesTheProcessesMarkers) {
  ScratchDir dir;
  RunningTarget target(1);
  ASSERT_TRUE(target.waitFor("ready"));
  auto r = test::runProcess(SONDE_BINARY, {"-l", "process(" + target.pidText() + ").mark(\"*\")"},
                            dir.path(), 60s);
  ASSERT_EQ(r.exitCode, 0) << describe(r);
  std::string exe = std::filesystem::canonical(E2E_ATTACH).string();
  // Two providers share the name, so each line names its provider.
  EXPECT_EQ(r.stdoutText, "process(\"" + exe + "\").provider(\"attach\").mark(\"tick\")\n" +
                              "process(\"" + exe +
                              "\").provider(\"attach_stock\").mark(\"tick\")\n")
      << describe(r);
  expectAllThreadsOk(target, 1);
}

TEST(AttachErrors, NoSuchProcess) {
  ScratchDir dir;
  auto r = attach(R"(probe process.mark("tick") {})", {"-x", "999999999"}, dir.path());
  EXPECT_EQ(r.exitCode, 1) << describe(r);
  EXPECT_EQ(r.stderrText, "sonde: option -x: no such process 999999999\n");
}

TEST(AttachErrors, StoppedProcess) {
  ScratchDir dir;
  RunningTarget target(1);
  ASSERT_TRUE(target.waitFor("ready"));
  kill(target.pid(), SIGSTOP);
  auto stopped = std::chrono::steady_clock::now() + 5s;
  while (readFile("/proc/" + target.pidText() + "/stat").find(") T ") == std::string::npos &&
         std::chrono::steady_clock::now() < stopped)
    std::this_thread::sleep_for(10ms);
  auto r = attach(countingScript(100), {"-x", target.pidText()}, dir.path());
  EXPECT_EQ(r.exitCode, 1) << describe(r);
  EXPECT_NE(r.stderrText.find("sonde: -x " + target.pidText() + ": it is stopped"),
            std::string::npos)
      << describe(r);
  kill(target.pid(), SIGCONT);
  expectAllThreadsOk(target, 1);
}

TEST(AttachErrors, AlreadyAttached) {
  ScratchDir dir;
  RunningTarget target(1);
  ASSERT_TRUE(target.waitFor("ready"));
  BackgroundSonde first(kAnnounceScript, {"-x", target.pidText()});
  ASSERT_TRUE(first.printed("attached"));
  auto r = attach(countingScript(100), {"-x", target.pidText()}, dir.path());
  EXPECT_EQ(r.exitCode, 1) << describe(r);
  EXPECT_NE(r.stderrText.find("sonde: -x " + target.pidText() +
                              ": it already has a sonde agent attached"),
            std::string::npos)
      << describe(r);
  first.stop(SIGINT);
  expectAllThreadsOk(target, 1);
}

TEST(AttachErrors, NoMatchingMarker) {
  ScratchDir dir;
  RunningTarget target(1);
  ASSERT_TRUE(target.waitFor("ready"));
  auto r =
      attach(R"(probe process.mark("no_such_marker") {})", {"-x", target.pidText()}, dir.path());
  EXPECT_EQ(r.exitCode, 1) << describe(r);
  EXPECT_NE(r.stderrText.find("no match"), std::string::npos) << describe(r);
  EXPECT_NE(r.stderrText.find("Pass 2: analysis failed."), std::string::npos) << describe(r);
  expectAllThreadsOk(target, 1);
}

TEST(AttachErrors, StaticallyLinkedProcess) {
  ScratchDir dir;
  RunningTarget target(0, E2E_STATIC_WORKLOAD, {"sleep", "300", "100000"});
  std::this_thread::sleep_for(100ms); // exec'd
  std::string script = std::string(R"(probe process(")") + E2E_ATTACH + R"(").mark("tick") {})";
  auto r = attach(script, {"-x", target.pidText()}, dir.path());
  EXPECT_EQ(r.exitCode, 1) << describe(r);
  EXPECT_NE(r.stderrText.find("sonde: -x " + target.pidText() +
                              ": it has no C library mapped (statically linked?)"),
            std::string::npos)
      << describe(r);
}

TEST(AttachErrors, AnotherUsersProcessNeedsPrivileges) {
  if (getuid() != 0 || access("/usr/bin/setpriv", X_OK) != 0)
    GTEST_SKIP() << "needs root (to start sonde as nobody) and setpriv";
  ScratchDir dir;
  chmod(dir.path().c_str(), 0777);
  RunningTarget target(1);
  ASSERT_TRUE(target.waitFor("ready"));
  auto r = test::runProcess("/usr/bin/setpriv",
                            {"--reuid=65534", "--regid=65534", "--clear-groups", SONDE_BINARY, "-x",
                             target.pidText(), "-e", R"(probe process.mark("tick") {})"},
                            dir.path(), 60s);
  EXPECT_EQ(r.exitCode, 1) << describe(r);
  EXPECT_NE(r.stderrText.find("permission denied"), std::string::npos) << describe(r);
  expectAllThreadsOk(target, 1);
}

} // namespace
} // namespace sonde::e2e
