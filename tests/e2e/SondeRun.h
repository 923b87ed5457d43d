// Running `sonde -e SCRIPT -c CMD` against an end-to-end target in a scratch
// directory, with a timeout, and describing the outcome for assertion messages.
#pragma once

#include "../corpus/ProcessRunner.h"

#include <string>
#include <vector>

namespace sonde::e2e {

// A scratch directory, removed with everything in it when this goes away.
class ScratchDir {
public:
  ScratchDir();
  ~ScratchDir();
  ScratchDir(const ScratchDir &) = delete;
  ScratchDir &operator=(const ScratchDir &) = delete;
  const std::string &path() const { return path_; }
  std::string file(const std::string &name) const { return path_ + "/" + name; }

private:
  std::string path_;
};

// sonde [options...] -e script -c command, run in `workDir`; 60 s at most.
test::ProcessResult runSonde(const std::string &script, const std::string &command,
                             const std::string &workDir,
                             const std::vector<std::string> &options = {});

// The command line, status, stdout and stderr of a run, for failure messages.
std::string describeRun(const std::string &script, const std::string &command,
                        const test::ProcessResult &result);

// A file's text, or "" when it cannot be read.
std::string readFile(const std::string &path);

// probe process("PATH").mark("NAME") { BODY }
std::string markProbe(const std::string &path, const std::string &name, const std::string &body);

} // namespace sonde::e2e
