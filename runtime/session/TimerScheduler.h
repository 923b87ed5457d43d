// Runs the module's timer probes (timer.s/ms/us/ns/hz) on one tool thread, each
// at its period plus a uniform random offset in [-randomize, +randomize].
#pragma once

#include "runtime/session/Runtime.h"

#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

namespace sonde::session {

class TimerScheduler {
public:
  explicit TimerScheduler(Runtime &rt);
  ~TimerScheduler();
  TimerScheduler(const TimerScheduler &) = delete;
  TimerScheduler &operator=(const TimerScheduler &) = delete;

  // Starts the thread if the module has timer probes.
  void start();
  // Stops firing and joins; a handler already running finishes first.
  void stop();

private:
  void loop();

  Runtime &rt_;
  std::vector<uint32_t> timers_; // probe indexes
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable wakeup_;
  bool stopping_ = false;
};

} // namespace sonde::session
