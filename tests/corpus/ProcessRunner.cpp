#include "ProcessRunner.h"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

namespace sonde::test {

std::string ProcessResult::describe() const {
  if (!error.empty())
    return "not started: " + error;
  if (timedOut)
    return "timed out (killed)";
  if (!exited)
    return std::string("killed by signal ") + std::to_string(signal) + " (" + strsignal(signal) +
           ")";
  return "exit " + std::to_string(exitCode);
}

namespace {

// In the child: only async-signal-safe calls until exec. Failures are reported
// through stderr with exit code 127, which the parent sees like any other output.
[[noreturn]] void execChild(const std::string &program, const std::vector<char *> &argv,
                            const std::string &workDir, int stdoutFd, int stderrFd) {
  int devNull = open("/dev/null", O_RDWR);
  if (devNull >= 0)
    dup2(devNull, STDIN_FILENO);
  dup2(stdoutFd, STDOUT_FILENO);
  dup2(stderrFd, STDERR_FILENO);
  if (chdir(workDir.c_str()) != 0) {
    const char msg[] = "corpus runner: chdir failed\n";
    (void)!write(STDERR_FILENO, msg, sizeof msg - 1);
    _exit(127);
  }
  execv(program.c_str(), argv.data());
  const char msg[] = "corpus runner: exec failed\n";
  (void)!write(STDERR_FILENO, msg, sizeof msg - 1);
  _exit(127);
}

} // namespace

ProcessResult runProcess(const std::string &program, const std::vector<std::string> &args,
                         const std::string &workDir, std::chrono::milliseconds timeout) {
  ProcessResult result;
  std::vector<std::string> argStrings;
  argStrings.push_back(program);
  argStrings.insert(argStrings.end(), args.begin(), args.end());
  std::vector<char *> argv;
  for (auto &a : argStrings)
    argv.push_back(a.data());
  argv.push_back(nullptr);

  int out[2], err[2];
  if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) {
    result.error = std::string("pipe: ") + strerror(errno);
    return result;
  }
  pid_t pid = fork();
  if (pid < 0) {
    result.error = std::string("fork: ") + strerror(errno);
    for (int fd : {out[0], out[1], err[0], err[1]})
      close(fd);
    return result;
  }
  if (pid == 0)
    execChild(program, argv, workDir, out[1], err[1]);
  close(out[1]);
  close(err[1]);

  // Read both pipes until EOF or the deadline; a hung program must fail the test,
  // not hang it.
  auto deadline = std::chrono::steady_clock::now() + timeout;
  pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
  std::string *texts[2] = {&result.stdoutText, &result.stderrText};
  int openPipes = 2;
  char buf[65536];
  while (openPipes > 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      result.timedOut = true;
      kill(pid, SIGKILL);
      break;
    }
    int r = poll(fds, 2, static_cast<int>(left.count()));
    if (r <= 0)
      continue; // EINTR or the deadline, which the check above handles
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
        continue;
      ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --openPipes;
        continue;
      }
      texts[i]->append(buf, static_cast<size_t>(n));
    }
  }
  for (auto &f : fds)
    if (f.fd >= 0)
      close(f.fd);

  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) {
    result.exited = true;
    result.exitCode = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.signal = WTERMSIG(status);
  }
  return result;
}

std::vector<std::string> linesOf(const std::string &text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    lines.push_back(line);
  return lines;
}

} // namespace sonde::test
