// The whole agent: targets started with the SONDE_AGENT_* contract and
// LD_PRELOAD, running a module `sonde -p4` compiled for their markers.
#include "runtime/session/LoadedModule.h"
#include "runtime/values/Segment.h"

#include <cstdio>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <optional>
#include <poll.h>
#include <string>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace sonde::agent::test {
namespace {

// A compiled module (sonde -p4), or empty with the reason in `error`.
std::string compileModule(const std::string &script, std::string *error) {
  // ctest runs these tests in parallel processes: one script file per process.
  std::string path = ::testing::TempDir() + "agent_script_" + std::to_string(getpid()) + ".probe";
  FILE *f = std::fopen(path.c_str(), "w");
  std::fputs(script.c_str(), f);
  std::fclose(f);
  std::string cmd = std::string(SONDE_BINARY) + " -p4 " + path + " 2>&1";
  FILE *p = popen(cmd.c_str(), "r");
  std::string out;
  char buf[4096];
  while (size_t n = std::fread(buf, 1, sizeof buf, p))
    out.append(buf, n);
  int rc = pclose(p);
  while (!out.empty() && out.back() == '\n')
    out.pop_back();
  if (rc != 0 || out.find('\n') != std::string::npos) {
    *error = out;
    return {};
  }
  return out;
}

struct Pipe {
  int read = -1, write = -1;
  Pipe() {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) == 0)
      read = fds[0], write = fds[1];
  }
};

void closeFd(int &fd) {
  if (fd >= 0)
    close(fd);
  fd = -1;
}

struct RunResult {
  std::string status, output, errors, stdoutText;
  int exitCode = -1;
  uint32_t agentsAtEnd = 99;
};

// Runs TARGET with the agent; `onStdout(text so far)` may return true to close
// the control pipe (detach) before the target ends.
class AgentRun {
public:
  AgentRun(const std::string &modulePath, std::string *error) {
    module_ = session::LoadedModule::open(modulePath, error);
    if (module_)
      segment_ = values::Segment::create(module_->layout(), error);
    if (segment_)
      sonde_session_set_state(segment_->abi(), SONDE_SESSION_RUNNING);
    modulePath_ = modulePath;
  }
  bool ok() const { return segment_.has_value(); }
  // The module the target is told to load (the segment stays this one's).
  void setTargetModule(const std::string &path) { modulePath_ = path; }
  // SONDE_AGENT_PROBED: the files whose processes attach (others only follow execs).
  void setProbed(const std::string &ids) { probed_ = ids; }
  const sonde_module_desc &desc() const { return module_->desc(); }

  RunResult run(std::vector<std::string> args, bool detachOnFired = false) {
    Pipe control, status, output, errors, out;
    pid_t pid = fork();
    if (pid == 0) {
      for (int fd : {control.read, status.write, output.write, errors.write, segment_->fd()})
        fcntl(fd, F_SETFD, 0);
      dup2(out.write, 1);
      auto env = [](const char *name, long v) { setenv(name, std::to_string(v).c_str(), 1); };
      setenv("SONDE_AGENT_MODULE", modulePath_.c_str(), 1);
      env("SONDE_AGENT_SEGMENT_FD", segment_->fd());
      env("SONDE_AGENT_CONTROL_FD", control.read);
      env("SONDE_AGENT_STATUS_FD", status.write);
      env("SONDE_AGENT_OUTPUT_FD", output.write);
      env("SONDE_AGENT_ERROR_FD", errors.write);
      env("SONDE_AGENT_CONSUMER_PID", getppid());
      if (!probed_.empty())
        setenv("SONDE_AGENT_PROBED", probed_.c_str(), 1);
      setenv("LD_PRELOAD", SONDE_AGENT_LIBRARY, 1);
      std::vector<char *> argv;
      for (auto &a : args)
        argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(argv[0], argv.data());
      _exit(127);
    }
    closeFd(control.read);
    closeFd(status.write);
    closeFd(output.write);
    closeFd(errors.write);
    closeFd(out.write);
    RunResult r;
    std::vector<std::pair<int *, std::string *>> streams = {{&status.read, &r.status},
                                                            {&output.read, &r.output},
                                                            {&errors.read, &r.errors},
                                                            {&out.read, &r.stdoutText}};
    for (;;) {
      std::vector<pollfd> fds;
      for (auto &[fd, text] : streams)
        if (*fd >= 0)
          fds.push_back({*fd, POLLIN, 0});
      if (fds.empty() || poll(fds.data(), fds.size(), 20000) <= 0)
        break;
      for (auto &[fd, text] : streams) {
        if (*fd < 0)
          continue;
        pollfd probe{*fd, POLLIN, 0};
        if (poll(&probe, 1, 0) <= 0)
          continue;
        char buf[65536];
        ssize_t n = read(*fd, buf, sizeof buf);
        if (n <= 0)
          closeFd(*fd);
        else
          text->append(buf, static_cast<size_t>(n));
      }
      if (detachOnFired && r.stdoutText.find("fired\n") != std::string::npos)
        closeFd(control.write);
    }
    closeFd(control.write);
    for (auto &[fd, text] : streams)
      closeFd(*fd);
    int wstatus = 0;
    waitpid(pid, &wstatus, 0);
    r.exitCode = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
    r.agentsAtEnd = sonde_session_agent_count(segment_->abi());
    return r;
  }

private:
  std::string modulePath_, probed_;
  std::optional<session::LoadedModule> module_;
  std::optional<values::Segment> segment_;
};

size_t countLines(const std::string &text, const std::string &line) {
  size_t n = 0;
  for (size_t at = text.find(line); at != std::string::npos; at = text.find(line, at + 1))
    ++n;
  return n;
}

class AgentRunTest : public ::testing::Test {
protected:
  void SetUp() override {
    std::string error;
    std::string target = AGENT_TARGET;
    modulePath_ = compileModule("probe process(\"" + target +
                                    "\").mark(\"tick\") { printf(\"tick %d\\n\", $arg1) }\n"
                                    "probe process(\"" +
                                    target + "\").mark(\"stock\") { printf(\"stock\\n\") }\n",
                                &error);
    if (modulePath_.empty())
      GTEST_SKIP() << "sonde cannot compile marker probes yet: " << error;
  }
  std::string modulePath_;
};

TEST_F(AgentRunTest, ThreadsAreTracedAndOutputFlushedAtExit) {
  std::string error;
  AgentRun run(modulePath_, &error);
  ASSERT_TRUE(run.ok()) << error;
  ASSERT_GT(run.desc().marker_site_count, 0u);
  RunResult r = run.run({AGENT_TARGET, "threads", "1000"});
  EXPECT_EQ(r.status, "ready\n");
  EXPECT_EQ(r.exitCode, 0) << r.errors;
  EXPECT_EQ(r.stdoutText, "done enabled=1\n");
  EXPECT_EQ(countLines(r.output, "tick "), 5000u);
  EXPECT_EQ(countLines(r.output, "tick 999\n"), 5u);
  EXPECT_EQ(r.errors, "");
  EXPECT_EQ(r.agentsAtEnd, 0u);
}

TEST_F(AgentRunTest, StockMarkersGoThroughTheTrap) {
  std::string error;
  AgentRun run(modulePath_, &error);
  ASSERT_TRUE(run.ok()) << error;
  RunResult r = run.run({AGENT_TARGET, "stock", "200"});
  EXPECT_EQ(r.status, "ready\n");
  EXPECT_EQ(r.exitCode, 0) << r.errors;
  EXPECT_EQ(countLines(r.output, "stock\n"), 200u);
}

TEST_F(AgentRunTest, ClosingTheControlPipeDetaches) {
  std::string error;
  AgentRun run(modulePath_, &error);
  ASSERT_TRUE(run.ok()) << error;
  RunResult r = run.run({AGENT_TARGET, "wait", "300"}, true);
  EXPECT_EQ(r.status, "ready\n");
  EXPECT_EQ(r.exitCode, 0) << r.errors;
  // The second 300 ticks came after the semaphore dropped: not traced.
  EXPECT_EQ(countLines(r.output, "tick "), 300u);
  EXPECT_EQ(r.stdoutText, "fired\ndone enabled=1\n");
  EXPECT_EQ(r.agentsAtEnd, 0u);
}

TEST_F(AgentRunTest, ForkChildrenAreTraced) {
  std::string error;
  AgentRun run(modulePath_, &error);
  ASSERT_TRUE(run.ok()) << error;
  RunResult r = run.run({AGENT_TARGET, "fork", "250"});
  EXPECT_EQ(r.exitCode, 0) << r.errors;
  EXPECT_EQ(countLines(r.output, "tick "), 500u);
  EXPECT_EQ(r.agentsAtEnd, 0u);
}

TEST_F(AgentRunTest, ExecFlushesAndLeaves) {
  std::string error;
  AgentRun run(modulePath_, &error);
  ASSERT_TRUE(run.ok()) << error;
  RunResult r = run.run({AGENT_TARGET, "exec", "100"});
  EXPECT_EQ(r.exitCode, 0) << r.errors;
  EXPECT_EQ(r.stdoutText, "enabled=1\n");
  EXPECT_EQ(countLines(r.output, "tick "), 100u);
  EXPECT_EQ(r.agentsAtEnd, 0u);
}

// The agent comes along into what the target execs. Without a list of probed
// files every process attaches: env (no markers), then the target.
TEST_F(AgentRunTest, ProgramsTheTargetExecsAreTraced) {
  std::string error;
  AgentRun run(modulePath_, &error);
  ASSERT_TRUE(run.ok()) << error;
  RunResult r = run.run({"/usr/bin/env", AGENT_TARGET, "threads", "10"});
  EXPECT_EQ(r.status, "ready\nready\n");
  EXPECT_EQ(r.exitCode, 0) << r.errors;
  EXPECT_EQ(r.stdoutText, "done enabled=1\n");
  EXPECT_EQ(countLines(r.output, "tick "), 50u);
  EXPECT_EQ(r.agentsAtEnd, 0u);
}

// With the list, env (no probed file) only passes the agent on; the target
// reports its file and attaches.
TEST_F(AgentRunTest, AProgramWithoutProbedFilesOnlyFollowsExecs) {
  std::string error;
  AgentRun run(modulePath_, &error);
  ASSERT_TRUE(run.ok()) << error;
  struct stat st;
  ASSERT_EQ(stat(AGENT_TARGET, &st), 0);
  std::string id = std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino);
  run.setProbed(id);
  RunResult r = run.run({"/usr/bin/env", AGENT_TARGET, "threads", "10"});
  EXPECT_EQ(r.status, "following\nprobed " + id + "\nready\n");
  EXPECT_EQ(r.exitCode, 0) << r.errors;
  EXPECT_EQ(r.stdoutText, "done enabled=1\n");
  EXPECT_EQ(countLines(r.output, "tick "), 50u);
  EXPECT_EQ(r.agentsAtEnd, 0u);
}

// Markers of a library the target opens later are attached when it appears, and
// again when it comes back after a dlclose.
TEST(AgentDlopenTest, LibrariesOpenedLaterAreAttached) {
  std::string error, plugin = AGENT_PLUGIN;
  std::string module = compileModule(
      "probe process(\"" + plugin + "\").mark(\"hit\") { printf(\"hit %d\\n\", $arg1) }\n", &error);
  ASSERT_FALSE(module.empty()) << error;
  AgentRun run(module, &error);
  ASSERT_TRUE(run.ok()) << error;
  RunResult r = run.run({AGENT_TARGET, "dlopen", "40", plugin});
  EXPECT_EQ(r.status, "ready\n");
  EXPECT_EQ(r.exitCode, 0) << r.errors;
  EXPECT_EQ(countLines(r.output, "hit "), 80u) << r.output;
  EXPECT_EQ(countLines(r.output, "hit 39\n"), 2u);
  EXPECT_EQ(r.errors, "");
  EXPECT_EQ(r.agentsAtEnd, 0u);
}

TEST_F(AgentRunTest, AFailedStartLeavesTheTargetRunning) {
  std::string error;
  AgentRun run(modulePath_, &error);
  ASSERT_TRUE(run.ok()) << error;
  run.setTargetModule("/nonexistent/module.so");
  RunResult r = run.run({AGENT_TARGET, "threads", "10"});
  EXPECT_EQ(r.status.rfind("error: cannot load module", 0), 0u) << r.status;
  EXPECT_EQ(r.exitCode, 0);
  EXPECT_EQ(r.stdoutText, "done enabled=0\n");
  EXPECT_EQ(r.agentsAtEnd, 0u);
}

TEST(AgentLifecycleTest, ProcessAndThreadProbesRunInTheTarget) {
  std::string error, target = AGENT_TARGET;
  std::string module = compileModule(
      "probe process(\"" + target + "\").begin { printf(\"process.begin\\n\") }\n" +
          "probe process(\"" + target + "\").end { printf(\"process.end\\n\") }\n" +
          "probe process(\"" + target + "\").thread.begin { printf(\"thread.begin\\n\") }\n" +
          "probe process(\"" + target + "\").thread.end { printf(\"thread.end\\n\") }\n" +
          "probe process(\"/bin/true\").begin { printf(\"other\\n\") }\n",
      &error);
  if (module.empty())
    GTEST_SKIP() << "sonde cannot compile lifecycle probes yet: " << error;
  AgentRun run(module, &error);
  ASSERT_TRUE(run.ok()) << error;
  RunResult r = run.run({AGENT_TARGET, "threads", "5"});
  EXPECT_EQ(r.exitCode, 0) << r.errors;
  // Main thread and four workers; one process.
  EXPECT_EQ(countLines(r.output, "thread.begin\n"), 5u) << r.output;
  EXPECT_EQ(countLines(r.output, "thread.end\n"), 5u) << r.output;
  EXPECT_EQ(countLines(r.output, "process.begin\n"), 1u);
  EXPECT_EQ(countLines(r.output, "process.end\n"), 1u);
  EXPECT_EQ(countLines(r.output, "other\n"), 0u);
  EXPECT_EQ(r.output.rfind("process.begin\n", 0), 0u) << r.output;
  EXPECT_EQ(r.output.substr(r.output.size() - 12), "process.end\n") << r.output;
}

} // namespace
} // namespace sonde::agent::test
