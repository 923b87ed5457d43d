// What the -x tests share: a target running on its own (not sonde's child)
// with its output in a pipe, sonde running attached in the background, and
// the counting script every attached run prints the same line with.
#pragma once

#include "SondeRun.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <dirent.h>
#include <fcntl.h>
#include <filesystem>
#include <poll.h>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace sonde::e2e {

using namespace std::chrono_literals;

// Starts `program` with `args` (argv[1..]), its stdout into a pipe whose read
// end goes to *out; returns its pid (-1 if it could not start).
pid_t spawnWithStdoutPipe(const std::string &program, std::vector<std::string> args, int *out);

// e2e_attach (or `program`) running on its own (not sonde's child), its stdout
// in a pipe.
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
    for (const char *module : {"module.so", "memfd:sonde-module"})
      for (size_t at = 0; (at = maps.find(module, at)) != std::string::npos; ++at)
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
  void signal(int sig) { kill(pid_, sig); }
  pid_t pid() const { return pid_; }
  // Everything written to its standard output until every writer has gone
  // (it, and children that share the pipe), 30 s at most.
  std::string drain() {
    auto deadline = std::chrono::steady_clock::now() + 30s;
    while (std::chrono::steady_clock::now() < deadline) {
      pollfd p{out_, POLLIN, 0};
      if (poll(&p, 1, 100) <= 0)
        continue;
      char buf[1024];
      ssize_t n = read(out_, buf, sizeof buf);
      if (n <= 0)
        break;
      output_.append(buf, static_cast<size_t>(n));
    }
    return output_;
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

// The script whose end probe prints "threads N stock N wrong 0 target PID"
// for e2e_attach, exiting after `ms` milliseconds.
std::string countingScript(int ms);

// sonde OPTIONS -e SCRIPT in `dir`, 60 s at most.
test::ProcessResult attach(const std::string &script, const std::vector<std::string> &options,
                           const std::string &dir);

std::string describe(const test::ProcessResult &r);

// Stops e2e_attach and expects each of its `threads` threads to say "ok".
void expectAllThreadsOk(RunningTarget &target, int threads);

} // namespace sonde::e2e
