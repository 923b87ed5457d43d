// A private scratch directory for scripts and tapsets a test writes, removed
// when the test ends.
#pragma once

#include <filesystem>
#include <string>

namespace sonde::test {

class ScriptDir {
public:
  // `prefix` names the directory under $TMPDIR (prefix-XXXXXX).
  explicit ScriptDir(const std::string &prefix);
  ~ScriptDir();
  ScriptDir(const ScriptDir &) = delete;
  ScriptDir &operator=(const ScriptDir &) = delete;

  const std::filesystem::path &path() const { return path_; }
  // Writes `text` to `name` (a path relative to the directory, its folders
  // made as needed) and returns `name`.
  std::string write(const std::string &name, const std::string &text) const;

private:
  std::filesystem::path path_;
};

} // namespace sonde::test
