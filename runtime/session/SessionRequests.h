// What handlers ask of the sonde process and only it does: system() commands,
// run in the background as the invoking user, and switch_file(), which moves
// the output to its next file. Handlers in sonde call in directly; handlers in
// traced processes post to the segment's mailbox (values/SessionMailbox.h),
// which a thread here serves as requests arrive.
#pragma once

#include "runtime/session/Runtime.h"

#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace sonde::session {

class RecordOutput;

class SessionRequests {
public:
  // `records`: the record transport whose output a switch must drain first, or null.
  SessionRequests(Runtime &rt, RecordOutput *records) : rt_(rt), records_(records) {}
  ~SessionRequests() { stop(); }
  SessionRequests(const SessionRequests &) = delete;
  SessionRequests &operator=(const SessionRequests &) = delete;

  // Which kinds of request traced processes may post: those the script makes
  // (system(), switch_file()); any other found in the mailbox is noted as
  // damage of the segment and not carried out. Both, until said otherwise.
  void acceptFromTargets(bool commands, bool fileSwitches) {
    commandsAccepted_ = commands;
    switchesAccepted_ = fileSwitches;
  }
  // Serves traced processes' requests from a thread of its own until stop().
  void start();
  // The last requests served, the thread ended.
  void stop();

  // system() in sonde: the command runs at the next serve(), after the handler.
  void queueCommand(const char *command);
  // switch_file() in sonde, once the caller's thread has flushed its output.
  void switchOutput();
  // Runs the queued commands and what traced processes posted, in order.
  void serve();

private:
  void switchLocked();
  void runCommand(const std::string &command);
  void warn(const std::string &text);

  Runtime &rt_;
  RecordOutput *records_;
  std::mutex mutex_;
  std::vector<std::string> commands_;
  std::thread thread_;
  std::atomic<bool> stopping_{false};
  bool commandsAccepted_ = true, switchesAccepted_ = true;
};

} // namespace sonde::session
