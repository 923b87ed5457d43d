// What the output-accounting tests share: a small tmpfs to fill, sonde with
// its standard output on /dev/full or running in the background (to stop it
// with SIGSTOP), and the numbers of sonde's closing lines.
#pragma once

#include "SondeRun.h"

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace sonde::e2e {

// A tmpfs of `megabytes` MiB mounted on `path` (created), unmounted and removed
// when this goes away. mounted() is false (with the reason) where the kernel
// refuses the mount (no privilege): the test then skips.
class SmallTmpfs {
public:
  SmallTmpfs(std::string path, unsigned megabytes);
  ~SmallTmpfs();
  SmallTmpfs(const SmallTmpfs &) = delete;
  SmallTmpfs &operator=(const SmallTmpfs &) = delete;
  bool mounted() const { return mounted_; }
  const std::string &reason() const { return reason_; }
  const std::string &path() const { return path_; }

private:
  std::string path_;
  std::string reason_;
  bool mounted_ = false;
};

// `program args...` with its standard output on /dev/full (stderr captured).
test::ProcessResult runToDevFull(const std::string &program, const std::vector<std::string> &args,
                                 const std::string &workDir);
// sonde [options...] -e script -c command, standard output on /dev/full.
test::ProcessResult runSondeToDevFull(const std::string &script, const std::string &command,
                                      const std::string &workDir,
                                      const std::vector<std::string> &options);

// sonde started in the background, its output in files; stop() and resume()
// send SIGSTOP and SIGCONT.
class BackgroundSonde {
public:
  BackgroundSonde(const std::vector<std::string> &args, const std::string &workDir);
  ~BackgroundSonde(); // kills it if it still runs
  BackgroundSonde(const BackgroundSonde &) = delete;
  BackgroundSonde &operator=(const BackgroundSonde &) = delete;
  pid_t pid() const { return pid_; }
  // Waits for it to end (killing it after `timeout`): its result, output included.
  test::ProcessResult wait(std::chrono::seconds timeout);

private:
  pid_t pid_ = -1;
  std::string stdoutPath_, stderrPath_;
};

// Polls up to `timeout` for `done()`; whether it became true.
bool waitFor(const std::function<bool()> &done, std::chrono::seconds timeout);
// Whether process `pid` has exited (a zombie its parent has not reaped, or gone).
bool processExited(pid_t pid);

// Lines of `text` that end with a newline (and contain `needle`, if given):
// a line a write error cut short is not delivered.
uint64_t completeLines(const std::string &text, const std::string &needle = "");
// The count e2e_flood wrote to DIR/fired ("fired N"), or 0.
uint64_t firedEvents(const ScratchDir &dir);
// How many of e2e_flood's markers changed the errno its thread had set (all
// ones if its result cannot be read).
uint64_t errnoChanged(const ScratchDir &dir);

// From the transport summary "KIND transport (MODE mode): N records, B bytes,
// X MB/s, L lost[ (...)][, O overwritten ...]".
bool summaryLost(const std::string &stderrText, uint64_t &lost);
bool summaryCounts(const std::string &stderrText, uint64_t &records, uint64_t &lost,
                   uint64_t &overwritten);
// From the text transport's "...; N lines (B bytes) of output lost".
bool textLinesLost(const std::string &stderrText, uint64_t &lines);
// From `sonde report -v`: "N of M records were not written" (0 of the -v
// line's count when it says nothing) and "M records from S streams".
bool reportNotWritten(const std::string &stderrText, uint64_t &notWritten, uint64_t &read);

} // namespace sonde::e2e
