#include "OutputTestSupport.h"

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <spawn.h>
#include <sstream>
#include <sys/mount.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

extern char **environ;

namespace sonde::e2e {

SmallTmpfs::SmallTmpfs(std::string path, unsigned megabytes) : path_(std::move(path)) {
  std::error_code ignored;
  std::filesystem::create_directories(path_, ignored);
  std::string size = "size=" + std::to_string(megabytes) + "m";
  if (::mount("tmpfs", path_.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, size.c_str()) == 0) {
    mounted_ = true;
    return;
  }
  reason_ = "cannot mount a tmpfs on " + path_ + ": " + std::strerror(errno) +
            " (the test needs CAP_SYS_ADMIN)";
}

SmallTmpfs::~SmallTmpfs() {
  if (mounted_ && ::umount2(path_.c_str(), 0) != 0)
    ::umount2(path_.c_str(), MNT_DETACH);
  std::error_code ignored;
  std::filesystem::remove(path_, ignored);
}

test::ProcessResult runToDevFull(const std::string &program, const std::vector<std::string> &args,
                                 const std::string &workDir) {
  std::vector<std::string> shell{"-c", "exec \"$0\" \"$@\" >/dev/full", program};
  shell.insert(shell.end(), args.begin(), args.end());
  return test::runProcess("/bin/sh", shell, workDir, std::chrono::seconds(60));
}

test::ProcessResult runSondeToDevFull(const std::string &script, const std::string &command,
                                      const std::string &workDir,
                                      const std::vector<std::string> &options) {
  std::vector<std::string> args = options;
  args.insert(args.end(), {"-e", script, "-c", command});
  return runToDevFull(SONDE_BINARY, args, workDir);
}

BackgroundSonde::BackgroundSonde(const std::vector<std::string> &args, const std::string &workDir)
    : stdoutPath_(workDir + "/sonde.stdout"), stderrPath_(workDir + "/sonde.stderr") {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, stdoutPath_.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  posix_spawn_file_actions_addopen(&actions, 2, stderrPath_.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  posix_spawn_file_actions_addchdir_np(&actions, workDir.c_str());
  std::vector<char *> argv{const_cast<char *>(SONDE_BINARY)};
  for (const std::string &a : args)
    argv.push_back(const_cast<char *>(a.c_str()));
  argv.push_back(nullptr);
  if (posix_spawn(&pid_, SONDE_BINARY, &actions, nullptr, argv.data(), environ) != 0)
    pid_ = -1;
  posix_spawn_file_actions_destroy(&actions);
}

BackgroundSonde::~BackgroundSonde() {
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    ::kill(pid_, SIGCONT);
    ::waitpid(pid_, nullptr, 0);
  }
}

test::ProcessResult BackgroundSonde::wait(std::chrono::seconds timeout) {
  test::ProcessResult result;
  if (pid_ <= 0) {
    result.error = "sonde did not start";
    return result;
  }
  int status = 0;
  bool done = waitFor([&] { return ::waitpid(pid_, &status, WNOHANG) == pid_; }, timeout);
  if (!done) {
    ::kill(pid_, SIGKILL);
    ::kill(pid_, SIGCONT);
    ::waitpid(pid_, &status, 0);
    result.timedOut = true;
  }
  pid_ = -1;
  result.exited = !result.timedOut && WIFEXITED(status);
  result.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  result.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  result.stdoutText = readFile(stdoutPath_);
  result.stderrText = readFile(stderrPath_);
  return result;
}

bool waitFor(const std::function<bool()> &done, std::chrono::seconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!done()) {
    if (std::chrono::steady_clock::now() >= deadline)
      return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

bool processExited(pid_t pid) {
  std::string stat = readFile("/proc/" + std::to_string(pid) + "/stat");
  size_t paren = stat.rfind(')');
  // "PID (COMM) STATE ...": Z (zombie) or X (dead), or no such process.
  return paren == std::string::npos || paren + 2 >= stat.size() || stat[paren + 2] == 'Z' ||
         stat[paren + 2] == 'X';
}

uint64_t completeLines(const std::string &text, const std::string &needle) {
  uint64_t lines = 0;
  for (size_t at = 0; at < text.size();) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos)
      break;
    if (needle.empty() ||
        std::string_view(text).substr(at, end - at).find(needle) != std::string_view::npos)
      ++lines;
    at = end + 1;
  }
  return lines;
}

uint64_t firedEvents(const ScratchDir &dir) {
  unsigned long long fired = 0;
  if (std::sscanf(readFile(dir.file("fired")).c_str(), "fired %llu", &fired) != 1)
    return 0;
  return fired;
}

uint64_t errnoChanged(const ScratchDir &dir) {
  unsigned long long fired = 0, changed = 0;
  if (std::sscanf(readFile(dir.file("fired")).c_str(), "fired %llu errno-changed %llu", &fired,
                  &changed) != 2)
    return ~uint64_t{0};
  return changed;
}

bool summaryCounts(const std::string &stderrText, uint64_t &records, uint64_t &lost,
                   uint64_t &overwritten) {
  size_t at = stderrText.find(" transport (");
  if (at == std::string::npos)
    return false;
  size_t colon = stderrText.find("): ", at);
  if (colon == std::string::npos ||
      std::sscanf(stderrText.c_str() + colon,
                  "): %" SCNu64 " records, %*u bytes, %*f MB/s, %" SCNu64 " lost", &records,
                  &lost) != 2)
    return false;
  overwritten = 0;
  size_t end = stderrText.find('\n', colon);
  size_t comma = stderrText.find(" overwritten", colon);
  if (comma != std::string::npos && comma < end) {
    size_t start = stderrText.rfind(", ", comma);
    std::sscanf(stderrText.c_str() + start, ", %" SCNu64, &overwritten);
  }
  return true;
}

bool summaryLost(const std::string &stderrText, uint64_t &lost) {
  uint64_t records = 0, overwritten = 0;
  return summaryCounts(stderrText, records, lost, overwritten);
}

bool textLinesLost(const std::string &stderrText, uint64_t &lines) {
  size_t at = stderrText.find(" bytes) of output lost");
  if (at == std::string::npos)
    return false;
  size_t start = stderrText.rfind("; ", at);
  return start != std::string::npos &&
         std::sscanf(stderrText.c_str() + start, "; %" SCNu64 " lines (", &lines) == 1;
}

bool reportNotWritten(const std::string &stderrText, uint64_t &notWritten, uint64_t &read) {
  size_t streams = stderrText.find(" streams\n");
  if (streams == std::string::npos)
    return false;
  size_t start = stderrText.rfind("sonde report: ", streams);
  if (start == std::string::npos ||
      std::sscanf(stderrText.c_str() + start, "sonde report: %" SCNu64 " records from", &read) != 1)
    return false;
  notWritten = 0;
  size_t at = stderrText.find(" records were not written (write error)");
  if (at == std::string::npos)
    return true;
  size_t line = stderrText.rfind("ERROR: ", at);
  return line != std::string::npos &&
         std::sscanf(stderrText.c_str() + line, "ERROR: %" SCNu64 " of", &notWritten) == 1;
}

} // namespace sonde::e2e
