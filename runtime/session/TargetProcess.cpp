#include "runtime/session/TargetProcess.h"

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>
#include <wordexp.h>

namespace sonde::session {

namespace {

void closeFd(int &fd) {
  if (fd >= 0)
    close(fd);
  fd = -1;
}

std::string wordexpError(int rc) {
  switch (rc) {
  case WRDE_BADCHAR: return "it contains an unquoted |, &, ;, <, >, (, ), { or }";
  case WRDE_CMDSUB: return "command substitution is not allowed";
  case WRDE_SYNTAX: return "unbalanced quotes";
  case WRDE_NOSPACE: return "out of memory";
  default: return "it cannot be split into words";
  }
}

// The agent's contract (runtime/agent/README.md): LD_PRELOAD and the fds it reads.
void setAgentEnvironment(const TargetSpec &spec, int statusFd, int controlFd, int moduleFd) {
  // Inherited descriptors the agent reads: dup() clears FD_CLOEXEC.
  auto env = [](const char *name, long value) { setenv(name, std::to_string(value).c_str(), 1); };
  env("SONDE_AGENT_SEGMENT_FD", dup(spec.contract.segmentFd));
  if (spec.contract.relayFd >= 0)
    env("SONDE_AGENT_RELAY_FD", dup(spec.contract.relayFd));
  if (spec.contract.netlinkFd >= 0) {
    env("SONDE_AGENT_NETLINK_FD", dup(spec.contract.netlinkFd));
    setenv("SONDE_AGENT_NETLINK_CONFIG", spec.contract.netlinkConfig.c_str(), 1);
  }
  env("SONDE_AGENT_CONTROL_FD", controlFd);
  env("SONDE_AGENT_STATUS_FD", statusFd);
  env("SONDE_AGENT_OUTPUT_FD", dup(spec.contract.outputFd));
  env("SONDE_AGENT_ERROR_FD", dup(spec.contract.errorFd));
  env("SONDE_AGENT_CONSUMER_PID", spec.contract.consumerPid);
  env("SONDE_AGENT_TARGET_PID", getpid()); // target() in the programs it execs too
  setenv("SONDE_AGENT_MODULE", spec.contract.module.c_str(), 1);
  // Loaded through the descriptor: a program run as another user (runuser)
  // cannot open sonde's 0700 build directory.
  if (moduleFd >= 0)
    env("SONDE_AGENT_MODULE_FD", dup(moduleFd));
  setenv("SONDE_AGENT_PROBED", spec.probed.c_str(), 1);
  std::string preload = spec.agentPath;
  if (const char *old = getenv("LD_PRELOAD"); old && *old)
    preload += std::string(":") + old;
  setenv("LD_PRELOAD", preload.c_str(), 1);
}

// What the held child does: wait for sonde's go, then exec (with the agent).
[[noreturn]] void runChild(const TargetSpec &spec, char **argv, int goFd, int statusFd,
                           int controlFd, int moduleFd) {
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  signal(SIGPIPE, SIG_DFL);
  char go = 0;
  ssize_t n;
  do
    n = read(goFd, &go, 1);
  while (n < 0 && errno == EINTR);
  if (n != 1)
    _exit(0); // sonde gave up before the target ran
  // goFd is close-on-exec: no close() here, which kernel probes on this pid
  // (already attached) would count as the target's.

  // Without an agent path no probe runs in the target: it runs as it is.
  if (!spec.agentPath.empty())
    setAgentEnvironment(spec, statusFd, controlFd, moduleFd);
  execvp(argv[0], argv);
  std::string msg =
      "launch: cannot run '" + std::string(argv[0]) + "': " + std::strerror(errno) + "\n";
  (void)!write(statusFd, msg.data(), msg.size());
  _exit(127);
}

// Why execvp(program) would fail, found before anything runs; "" if it would not.
std::string whyNotExecutable(const std::string &program) {
  auto check = [](const std::string &path) -> std::string {
    struct stat st;
    if (stat(path.c_str(), &st) != 0)
      return std::strerror(errno);
    if (S_ISDIR(st.st_mode))
      return "it is a directory";
    if (access(path.c_str(), X_OK) != 0)
      return std::strerror(errno);
    return "";
  };
  if (program.find('/') != std::string::npos)
    return check(program);
  const char *path = getenv("PATH");
  std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  for (size_t start = 0; start <= dirs.size();) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos)
      end = dirs.size();
    std::string dir = dirs.substr(start, end - start);
    if (check((dir.empty() ? "." : dir) + "/" + program).empty())
      return "";
    start = end + 1;
  }
  return "not found in $PATH";
}

} // namespace

std::optional<TargetProcess> TargetProcess::spawn(const TargetSpec &spec, std::string *error) {
  wordexp_t words{};
  int rc = wordexp(spec.command.c_str(), &words, WRDE_NOCMD);
  if (rc != 0 || words.we_wordc == 0) {
    *error = "-c '" + spec.command + "': cannot run the command: " +
             (rc == 0 ? std::string("it is empty") : wordexpError(rc));
    if (rc == 0)
      wordfree(&words);
    return std::nullopt;
  }
  if (std::string why = whyNotExecutable(words.we_wordv[0]); !why.empty()) {
    *error = "-c '" + spec.command + "': cannot run '" + words.we_wordv[0] + "': " + why;
    wordfree(&words);
    return std::nullopt;
  }
  int goPipe[2], statusPipe[2], controlPipe[2];
  if (pipe2(goPipe, O_CLOEXEC) != 0) {
    *error = std::string("-c: pipe: ") + std::strerror(errno);
    wordfree(&words);
    return std::nullopt;
  }
  // The child's ends of status and control must survive exec; sonde's must not.
  if (pipe(statusPipe) != 0 || pipe(controlPipe) != 0) {
    *error = std::string("-c: pipe: ") + std::strerror(errno);
    wordfree(&words);
    return std::nullopt;
  }
  fcntl(statusPipe[0], F_SETFD, FD_CLOEXEC);
  fcntl(controlPipe[1], F_SETFD, FD_CLOEXEC);

  int moduleFd =
      spec.agentPath.empty() ? -1 : open(spec.contract.module.c_str(), O_RDONLY | O_CLOEXEC);
  pid_t pid = fork();
  if (pid < 0) {
    *error = std::string("-c: fork: ") + std::strerror(errno);
    wordfree(&words);
    return std::nullopt;
  }
  if (pid == 0) {
    // Kernel probes may already trace this pid, and a script counting close()
    // must see only the target's own: sonde's ends are close-on-exec, and the
    // one the child must drop now (so that a sonde gone before the go byte
    // reads as EOF) goes through close_range, another system call.
    syscall(SYS_close_range, goPipe[1], goPipe[1], 0u);
    // Before the go byte, as kernel probes on this pid start after the begin probes.
    if (spec.stdoutToStderr)
      dup2(STDERR_FILENO, STDOUT_FILENO);
    runChild(spec, words.we_wordv, goPipe[0], statusPipe[1], controlPipe[0], moduleFd);
  }
  if (moduleFd >= 0)
    close(moduleFd);
  wordfree(&words);
  close(goPipe[0]);
  close(statusPipe[1]);
  close(controlPipe[0]);
  fcntl(statusPipe[0], F_SETFL, O_NONBLOCK);

  TargetProcess t;
  t.pid_ = pid;
  t.goFd_ = goPipe[1];
  t.statusFd_ = statusPipe[0];
  t.controlFd_ = controlPipe[1];
  t.pidFd_ = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (t.pidFd_ < 0) {
    *error = std::string("-c: pidfd_open: ") + std::strerror(errno);
    t.abandon();
    return std::nullopt;
  }
  fcntl(t.pidFd_, F_SETFD, FD_CLOEXEC);
  return t;
}

TargetProcess::TargetProcess(TargetProcess &&o) noexcept
    : pid_(o.pid_), pidFd_(o.pidFd_), statusFd_(o.statusFd_), controlFd_(o.controlFd_),
      goFd_(o.goFd_), ready_(o.ready_), loaded_(o.loaded_), released_(o.released_),
      probedSeen_(std::move(o.probedSeen_)), status_(o.status_), reports_(std::move(o.reports_)) {
  o.pid_ = -1;
  o.pidFd_ = o.statusFd_ = o.controlFd_ = o.goFd_ = -1;
}

TargetProcess::~TargetProcess() {
  closeFd(goFd_);
  closeFd(controlFd_);
  closeFd(statusFd_);
  closeFd(pidFd_);
}

void TargetProcess::release() {
  if (goFd_ < 0)
    return;
  char go = 1;
  released_ = write(goFd_, &go, 1) == 1;
  closeFd(goFd_);
}

void TargetProcess::abandon() {
  closeFd(goFd_);
  if (pid_ > 0 && !status_) {
    int status = 0;
    while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    status_ = status;
  }
}

void TargetProcess::detachAgents() { closeFd(controlFd_); }

bool TargetProcess::takeAgentReports(int errFd) {
  // EOF: every agent (and the exec'd command) closed it; stop polling it.
  if (statusFd_ >= 0 && !reports_.readFrom(statusFd_))
    closeFd(statusFd_);
  while (std::optional<std::string> line = reports_.next()) {
    if (*line == "ready") {
      ready_ = loaded_ = true;
    } else if (*line == "following") {
      loaded_ = true;
    } else if (line->rfind("probed ", 0) == 0) {
      if (probedSeen_.size() < 4096)
        probedSeen_.insert(line->substr(7));
    } else if (line->rfind("warning: ", 0) == 0) {
      std::string msg = "sonde: WARNING: " + line->substr(9) + "\n";
      (void)!write(errFd, msg.data(), msg.size());
    } else if (line->rfind("launch: ", 0) == 0) {
      std::string msg = "sonde: -c: " + line->substr(8) + "\n";
      (void)!write(errFd, msg.data(), msg.size());
    } else {
      if (line->rfind("error: ", 0) == 0)
        line->erase(0, 7);
      std::string msg = "sonde: agent in pid " + std::to_string(pid_) + ": " + *line + "\n";
      (void)!write(errFd, msg.data(), msg.size());
    }
  }
  return ready_;
}

std::optional<int> TargetProcess::exitStatus() {
  if (!status_ && pid_ > 0) {
    int status = 0;
    pid_t r = waitpid(pid_, &status, WNOHANG);
    if (r == pid_)
      status_ = status;
  }
  return status_;
}

std::string describeWaitStatus(int status) {
  if (WIFEXITED(status))
    return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    const char *name = strsignal(WTERMSIG(status));
    return "was killed by signal " + std::to_string(WTERMSIG(status)) + " (" +
           (name ? name : "unknown") + ")" + (WCOREDUMP(status) ? ", core dumped" : "");
  }
  return "stopped with wait status " + std::to_string(status);
}

} // namespace sonde::session
