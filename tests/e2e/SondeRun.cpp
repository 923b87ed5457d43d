#include "SondeRun.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace sonde::e2e {

ScratchDir::ScratchDir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "sonde-e2e-XXXXXX").string();
  if (char *made = mkdtemp(pattern.data()))
    path_ = made;
}

ScratchDir::~ScratchDir() {
  std::error_code ignored;
  if (!path_.empty())
    std::filesystem::remove_all(path_, ignored);
}

test::ProcessResult runSonde(const std::string &script, const std::string &command,
                             const std::string &workDir, const std::vector<std::string> &options) {
  std::vector<std::string> args = options;
  args.insert(args.end(), {"-e", script, "-c", command});
  return test::runProcess(SONDE_BINARY, args, workDir, std::chrono::seconds(60));
}

std::string describeRun(const std::string &script, const std::string &command,
                        const test::ProcessResult &result) {
  std::ostringstream text;
  text << "sonde -e '" << script << "' -c '" << command << "': " << result.describe()
       << "\n--- stdout ---\n"
       << result.stdoutText.substr(0, 4000) << "--- stderr ---\n"
       << result.stderrText.substr(0, 4000);
  return text.str();
}

std::string readFile(const std::string &path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string markProbe(const std::string &path, const std::string &name, const std::string &body) {
  return "probe process(\"" + path + "\").mark(\"" + name + "\") { " + body + " }\n";
}

} // namespace sonde::e2e
