#include "runtime/agent/ThreadSweep.h"

#include "runtime/agent/DisplacedCode.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <dirent.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <vector>

namespace sonde::agent {

namespace {

// A question's sival_ptr.
constexpr uint64_t kTag = 0x5357ee7000000000ull;
constexpr uint64_t kTagMask = ~uint64_t{0};

// The sweep in progress; read by a handler after it sees `active`.
struct Sweep {
  const sonde_displaced_code *code = nullptr;
  uintptr_t site = 0, continuation = 0;
  const pid_t *asked = nullptr;
  std::atomic<bool> *answered = nullptr;
  size_t count = 0;
  std::atomic<bool> active{false};
  std::atomic<bool> unmovable{false};
  std::atomic<int> answering{0}; // handlers between their check of `active` and their answer
};
Sweep sweep;

std::vector<pid_t> threadsOfProcess(bool &ok) {
  std::vector<pid_t> out;
  DIR *d = opendir("/proc/self/task");
  ok = d != nullptr;
  if (!d)
    return out;
  while (dirent *e = readdir(d))
    if (e->d_name[0] >= '0' && e->d_name[0] <= '9')
      out.push_back(static_cast<pid_t>(std::atol(e->d_name)));
  closedir(d);
  return out;
}

enum class ThreadAt { Outside, Gone, Unknown };

// Where a thread is, as the kernel says for a thread blocked in it ("NR args
// SP PC", or "-1 SP PC" outside a system call); "running" and anything
// unreadable are Unknown. PC inside the region is Unknown too: the thread must
// be asked (it is moved when it returns to user space).
ThreadAt whereIs(pid_t tid, uintptr_t site, uint32_t length) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/self/task/%d/syscall", static_cast<int>(tid));
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return errno == ENOENT ? ThreadAt::Gone : ThreadAt::Unknown;
  char text[256];
  ssize_t n = read(fd, text, sizeof text - 1);
  close(fd);
  if (n <= 0)
    return ThreadAt::Unknown;
  text[n] = '\0';
  char *last = std::strrchr(text, ' ');
  if (!last || std::strncmp(text, "running", 7) == 0)
    return ThreadAt::Unknown;
  char *end = nullptr;
  unsigned long long pc = std::strtoull(last + 1, &end, 16);
  if (end == last + 1)
    return ThreadAt::Unknown;
  return pc > site && pc < site + length ? ThreadAt::Unknown : ThreadAt::Outside;
}

bool ask(pid_t tid) {
  siginfo_t si;
  std::memset(&si, 0, sizeof si);
  si.si_signo = SIGTRAP;
  si.si_code = SI_QUEUE;
  si.si_pid = getpid();
  si.si_uid = getuid();
  si.si_value.sival_ptr = reinterpret_cast<void *>(kTag);
  return syscall(SYS_rt_tgsigqueueinfo, getpid(), tid, SIGTRAP, &si) == 0;
}

void pause(long microseconds) {
  timespec ts{0, microseconds * 1000};
  nanosleep(&ts, nullptr);
}

} // namespace

bool moveThreadsOutOfRegion(const sonde_displaced_code &code, uintptr_t site,
                            uintptr_t continuation, std::string *why) {
  bool listed = false;
  std::vector<pid_t> threads = threadsOfProcess(listed);
  if (!listed) {
    *why = "the process's threads cannot be listed";
    return false;
  }
  const pid_t self = static_cast<pid_t>(syscall(SYS_gettid));
  std::vector<pid_t> asked;
  for (pid_t tid : threads)
    if (tid != self && whereIs(tid, site, code.length) == ThreadAt::Unknown)
      asked.push_back(tid);
  if (asked.empty())
    return true;

  std::vector<std::atomic<bool>> answered(asked.size());
  sweep.code = &code;
  sweep.site = site;
  sweep.continuation = continuation;
  sweep.asked = asked.data();
  sweep.answered = answered.data();
  sweep.count = asked.size();
  sweep.unmovable.store(false);
  sweep.active.store(true);
  // Threads answer as soon as they run. A question meeting a SIGTRAP already
  // pending (an int3) is lost: unanswered threads are asked again. One with
  // SIGTRAP blocked never answers, and is judged by where the kernel has it.
  bool done = false;
  for (long waited = 0, step = 20; !done && waited < 500000; waited += step) {
    done = true;
    for (size_t i = 0; i < asked.size(); ++i) {
      if (answered[i].load(std::memory_order_acquire))
        continue;
      done = false;
      if (!ask(asked[i]))
        answered[i].store(true); // gone meanwhile
    }
    if (!done)
      pause(step);
    step = std::min<long>(step * 2, 5000);
  }
  // A late answer may be running: `answered` lives until it is over.
  sweep.active.store(false);
  while (sweep.answering.load() != 0)
    pause(10);
  if (sweep.unmovable.load()) {
    *why = "a thread stopped inside the region between two of its instructions";
    return false;
  }
  for (size_t i = 0; i < asked.size(); ++i)
    if (!answered[i].load() && whereIs(asked[i], site, code.length) == ThreadAt::Unknown) {
      *why = "thread " + std::to_string(asked[i]) + " did not answer and may be inside the region";
      return false;
    }
  return true;
}

bool isSweepQuestion(const siginfo_t *info) {
  auto value = reinterpret_cast<uint64_t>(info->si_value.sival_ptr);
  return info->si_code == SI_QUEUE && (value & kTagMask) == kTag && info->si_pid == getpid();
}

void answerSweep(ucontext_t *uc) {
  struct Answering {
    Answering() { sweep.answering.fetch_add(1); }
    ~Answering() { sweep.answering.fetch_sub(1); }
  } answering;
  if (!sweep.active.load())
    return;
  greg_t &rip = uc->uc_mcontext.gregs[REG_RIP];
  auto at = static_cast<uintptr_t>(rip);
  if (at > sweep.site && at < sweep.site + sweep.code->length) {
    if (uintptr_t to = relocatedPoint(*sweep.code, sweep.site, sweep.continuation, at))
      rip = static_cast<greg_t>(to);
    else
      sweep.unmovable.store(true);
  }
  const pid_t self = static_cast<pid_t>(syscall(SYS_gettid));
  for (size_t i = 0; i < sweep.count; ++i)
    if (sweep.asked[i] == self)
      sweep.answered[i].store(true, std::memory_order_release);
}

} // namespace sonde::agent
