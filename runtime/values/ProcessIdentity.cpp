#include "runtime/values/ProcessIdentity.h"

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

namespace sonde::values {

namespace {

std::atomic<uint32_t> cachedPid{0};
[[maybe_unused]] const int pidRefreshOnFork = pthread_atfork(nullptr, nullptr, refreshMyPid);
// Bumped with each refresh of the pid (a fork child): a thread's cached tid
// from before it is the parent's.
std::atomic<uint32_t> pidGeneration{0};
thread_local uint32_t cachedTid = 0;
thread_local uint32_t cachedTidGeneration = 0;

} // namespace

void refreshMyPid() {
  cachedPid.store(static_cast<uint32_t>(getpid()), std::memory_order_relaxed);
  pidGeneration.fetch_add(1, std::memory_order_relaxed);
}

uint32_t myTid() {
  uint32_t generation = pidGeneration.load(std::memory_order_relaxed);
  if (__builtin_expect(cachedTid == 0 || cachedTidGeneration != generation, 0)) {
    cachedTid = static_cast<uint32_t>(gettid());
    cachedTidGeneration = generation;
  }
  return cachedTid;
}

uint32_t myPid() {
  uint32_t pid = cachedPid.load(std::memory_order_relaxed);
  if (__builtin_expect(pid == 0, 0)) {
    refreshMyPid();
    pid = cachedPid.load(std::memory_order_relaxed);
  }
  return pid;
}

bool processIsGone(uint32_t pid) {
  // kill() takes a pid_t: a word beyond the pid range would name a process group.
  if (!plausiblePid(pid))
    return true;
  if (kill(static_cast<pid_t>(pid), 0) != 0)
    return errno == ESRCH;
  char path[32] = "/proc/";
  char digits[12];
  int n = 0;
  for (uint32_t v = pid; v != 0 || n == 0; v /= 10)
    digits[n++] = static_cast<char>('0' + v % 10);
  size_t len = std::strlen(path);
  while (n > 0)
    path[len++] = digits[--n];
  std::memcpy(path + len, "/stat", 6);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return false;
  char buf[512];
  ssize_t got = read(fd, buf, sizeof(buf) - 1);
  close(fd);
  if (got <= 0)
    return false;
  buf[got] = '\0';
  const char *paren = std::strrchr(buf, ')');
  return paren && paren[1] == ' ' && (paren[2] == 'Z' || paren[2] == 'X');
}

} // namespace sonde::values
