#include "runtime/session/TimerScheduler.h"

#include "runtime/session/KernelProbes.h"

#include "runtime/session/ProbeRunner.h"

#include <chrono>
#include <csignal>
#include <queue>
#include <random>

namespace sonde::session {

using Clock = std::chrono::steady_clock;

TimerScheduler::TimerScheduler(Runtime &rt) : rt_(rt) {
  const auto &desc = rt.module->desc();
  for (uint32_t i = 0; i < desc.probe_count; ++i)
    if (desc.probes[i].kind == SONDE_PROBE_TIMER)
      timers_.push_back(i);
}

TimerScheduler::~TimerScheduler() { stop(); }

void TimerScheduler::start() {
  if (!timers_.empty() && !thread_.joinable())
    thread_ = std::thread([this] { loop(); });
}

void TimerScheduler::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wakeup_.notify_all();
  if (thread_.joinable())
    thread_.join();
}

void TimerScheduler::loop() {
  struct Due {
    Clock::time_point when;
    uint32_t probe;
    bool operator>(const Due &o) const { return when > o.when; }
  };
  std::mt19937_64 random(std::random_device{}());
  auto period = [&](uint32_t probe) {
    const sonde_probe_desc &p = rt_.module->probe(probe);
    int64_t ns = p.period_ns;
    if (p.randomize_ns > 0)
      ns += std::uniform_int_distribution<int64_t>(-p.randomize_ns, p.randomize_ns)(random);
    return std::chrono::nanoseconds(ns > 0 ? ns : 1);
  };

  std::priority_queue<Due, std::vector<Due>, std::greater<>> queue;
  Clock::time_point now = Clock::now();
  for (uint32_t probe : timers_)
    queue.push({now + period(probe), probe});

  int64_t actions = rt_.module->layout().limits().max_action_interruptible;
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stopping_) {
    Due next = queue.top();
    if (wakeup_.wait_until(lock, next.when, [this] { return stopping_; }))
      break;
    queue.pop();
    // Periods run from the previous due time, so the rate does not drift.
    queue.push({next.when + period(next.probe), next.probe});
    if (!sonde_session_running(rt_.segment->abi()))
      continue;
    lock.unlock();
    // Kernel probes' globals: seen as they are now, changes sent back.
    if (rt_.kernel)
      rt_.kernel->importState();
    runProbe(rt_, next.probe, actions);
    if (rt_.kernel)
      rt_.kernel->exportChanges();
    lock.lock();
  }
}

} // namespace sonde::session
