#include "TextDiff.h"

#include <algorithm>
#include <vector>

namespace sonde::test {

namespace {

std::vector<std::string> splitLines(const std::string &text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    if (nl == std::string::npos) {
      lines.push_back(text.substr(start) + "  <no newline at end>");
      break;
    }
    lines.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  return lines;
}

std::string visible(const std::string &line) {
  std::string s;
  for (char c : line) {
    if (c == '\t')
      s += "\\t";
    else
      s += c;
  }
  return s;
}

} // namespace

std::string lineDiff(const std::string &expected, const std::string &actual) {
  auto a = splitLines(expected), b = splitLines(actual);
  // Longest common subsequence table; the files are small (a few dozen lines).
  std::vector<std::vector<size_t>> lcs(a.size() + 1, std::vector<size_t>(b.size() + 1, 0));
  for (size_t i = a.size(); i-- > 0;)
    for (size_t j = b.size(); j-- > 0;)
      lcs[i][j] = a[i] == b[j] ? lcs[i + 1][j + 1] + 1 : std::max(lcs[i + 1][j], lcs[i][j + 1]);
  std::string out = "--- expected\n+++ actual\n";
  size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    if (i < a.size() && j < b.size() && a[i] == b[j]) {
      out += " " + visible(a[i++]) + "\n";
      ++j;
    } else if (j < b.size() && (i == a.size() || lcs[i][j + 1] >= lcs[i + 1][j])) {
      out += "+" + visible(b[j++]) + "\n";
    } else {
      out += "-" + visible(a[i++]) + "\n";
    }
  }
  return out;
}

} // namespace sonde::test
