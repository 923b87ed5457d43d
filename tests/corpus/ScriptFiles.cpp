#include "ScriptFiles.h"

#include <fstream>
#include <sstream>

namespace sonde::test {

std::string readFile(const std::filesystem::path &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> headerWords(const std::string &text, const std::string &key) {
  std::istringstream in(text);
  std::vector<std::string> words;
  const std::string marker = "# " + key + ":";
  for (std::string line; std::getline(in, line) && line.rfind("#", 0) == 0;) {
    if (line.rfind(marker, 0) != 0)
      continue;
    std::istringstream rest(line.substr(marker.size()));
    for (std::string w; rest >> w;)
      words.push_back(w);
  }
  return words;
}

} // namespace sonde::test
