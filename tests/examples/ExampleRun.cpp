#include "ExampleRun.h"

#include <cstdlib>
#include <filesystem>
#include <regex>
#include <sstream>

namespace sonde::examples {

std::string examplePath(const std::string &relative) {
  return std::string(SONDE_EXAMPLES_DIR) + "/" + relative;
}

std::string targetCommand(const std::string &name, const std::string &args) {
  std::string command = std::string(SONDE_EXAMPLE_TARGETS_DIR) + "/" + name;
  return args.empty() ? command : command + " " + args;
}

test::ProcessResult runExample(const std::string &relative, const std::vector<std::string> &options,
                               const std::vector<std::string> &scriptArgs) {
  char dir[] = "/tmp/sonde-example-XXXXXX";
  if (!mkdtemp(dir))
    return {};
  std::vector<std::string> args = options;
  args.push_back(examplePath(relative));
  args.insert(args.end(), scriptArgs.begin(), scriptArgs.end());
  test::ProcessResult r = test::runProcess(SONDE_BINARY, args, dir, std::chrono::seconds(120));
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  return r;
}

std::string describe(const test::ProcessResult &r) {
  return r.describe() + "\nstdout:\n" + r.stdoutText + "stderr:\n" + r.stderrText;
}

std::vector<long long> numbersAfter(const std::string &text, const std::string &pattern) {
  std::vector<long long> out;
  std::regex re(pattern);
  for (const std::string &line : test::linesOf(text)) {
    std::smatch m;
    if (std::regex_search(line, m, re) && m.size() > 1)
      out.push_back(std::strtoll(m[1].str().c_str(), nullptr, 10));
  }
  return out;
}

std::vector<std::vector<std::string>> rowsMatching(const std::string &text,
                                                   const std::string &pattern) {
  std::vector<std::vector<std::string>> out;
  std::regex re(pattern);
  for (const std::string &line : test::linesOf(text)) {
    std::smatch m;
    if (!std::regex_search(line, m, re))
      continue;
    std::vector<std::string> groups;
    for (size_t i = 1; i < m.size(); ++i)
      groups.push_back(m[i].str());
    out.push_back(groups);
  }
  return out;
}

bool kernelProbesRefused(const test::ProcessResult &r) {
  return r.exited && r.exitCode != 0 &&
         r.stderrText.find("kernel probes need root") != std::string::npos;
}

std::optional<long long> numberAfter(const std::string &text, const std::string &pattern) {
  std::vector<long long> all = numbersAfter(text, pattern);
  if (all.empty())
    return std::nullopt;
  return all.front();
}

std::string blockFrom(const std::string &text, const std::string &pattern) {
  std::regex re(pattern);
  std::string out;
  bool inside = false;
  for (const std::string &line : test::linesOf(text)) {
    if (!inside && !std::regex_search(line, re))
      continue;
    if (inside && line.empty())
      break;
    inside = true;
    out += line + "\n";
  }
  return out;
}

long long histogramTotal(const std::string &text) {
  long long total = 0;
  for (long long n : numbersAfter(text, "^ *-?\\d+ \\|[@ ]* (\\d+)$"))
    total += n;
  return total;
}

} // namespace sonde::examples
