// What the trace-output tests share: a scratch trace directory, whole-file
// reads, format arguments, and babeltrace2 run over a CTF trace.
#pragma once

#include "runtime/format/FormatAbi.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace sonde::testing {

// A fresh directory under /tmp named `prefix`-XXXXXX, removed afterwards.
class TraceDir {
public:
  explicit TraceDir(const std::string &prefix = "sonde-trace") {
    std::string pattern = "/tmp/" + prefix + "-XXXXXX";
    path_ = ::mkdtemp(pattern.data());
  }
  ~TraceDir() { std::filesystem::remove_all(path_); }
  TraceDir(const TraceDir &) = delete;
  TraceDir &operator=(const TraceDir &) = delete;
  const std::string &path() const { return path_; }

private:
  std::string path_;
};

inline std::string readFile(const std::string &path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

inline SondeFormatArg str(const char *s) {
  SondeFormatArg a;
  a.s = s;
  return a;
}

inline SondeFormatArg num(int64_t i) {
  SondeFormatArg a;
  a.i = i;
  return a;
}

// What `command` (run by the shell) writes to its standard output.
inline std::string commandOutput(const std::string &command, int *status = nullptr) {
  std::string output;
  FILE *pipe = ::popen(command.c_str(), "r");
  if (!pipe)
    return output;
  char chunk[65536];
  while (size_t n = std::fread(chunk, 1, sizeof chunk, pipe))
    output.append(chunk, n);
  int s = ::pclose(pipe);
  if (status)
    *status = s;
  return output;
}

struct Babeltrace {
  bool ran = false; // false: babeltrace2 is not installed
  int status = -1;
  std::string out;
  std::string err;
};

// babeltrace2's text of the trace in `dir`, without deltas; `clockOption`
// "--clock-cycles" (raw timestamps) or "--clock-seconds" (seconds since the
// epoch) keeps it independent of the time zone.
inline Babeltrace runBabeltrace(const std::string &dir, const char *clockOption) {
  Babeltrace result;
  if (std::system("command -v babeltrace2 >/dev/null 2>&1") != 0)
    return result;
  result.ran = true;
  std::string err = dir + ".stderr";
  result.out = commandOutput(std::string("babeltrace2 ") + clockOption + " --no-delta '" + dir +
                                 "' 2>'" + err + "'",
                             &result.status);
  result.err = readFile(err);
  std::filesystem::remove(err);
  return result;
}

} // namespace sonde::testing
