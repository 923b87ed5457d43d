#include "ScriptDir.h"

#include <cstdlib>
#include <fstream>
#include <stdexcept>

namespace sonde::test {

ScriptDir::ScriptDir(const std::string &prefix) {
  std::string pattern = std::filesystem::temp_directory_path() / (prefix + "-XXXXXX");
  if (!mkdtemp(pattern.data()))
    throw std::runtime_error("cannot make a directory " + pattern);
  path_ = pattern;
}

ScriptDir::~ScriptDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::string ScriptDir::write(const std::string &name, const std::string &text) const {
  std::filesystem::create_directories((path_ / name).parent_path());
  std::ofstream(path_ / name, std::ios::binary) << text;
  return name;
}

} // namespace sonde::test
