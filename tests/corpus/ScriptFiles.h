// Reading test scripts and their header conventions, shared by the corpus,
// round-trip and conformance runners.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace sonde::test {

// The whole file, bytes as they are ("" if it cannot be read).
std::string readFile(const std::filesystem::path &path);

// Words after `# KEY:` in a script's leading comment lines, e.g.
// `# args: 5 foo` or `# options: -D MAXACTION=10`.
std::vector<std::string> headerWords(const std::string &text, const std::string &key);

} // namespace sonde::test
