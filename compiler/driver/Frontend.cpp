#include "driver/Frontend.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace sonde {

namespace fs = std::filesystem;

namespace {

// Every file with extension `ext` under `dir`, in a stable order for stable
// diagnostics; none when `dir` cannot be read.
std::vector<fs::path> filesUnder(const std::string &dir, const char *ext) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (const auto &entry : fs::recursive_directory_iterator(dir, ec))
    if (entry.is_regular_file() && entry.path().extension() == ext)
      files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

std::string readFile(const fs::path &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

} // namespace

Frontend::Frontend(std::ostream &diagOut, FrontendOptions opts)
    : opts_(std::move(opts)), diags_(diagOut) {}

bool Frontend::loadLibraryMacros() {
  bool ok = true;
  for (const auto &dir : libraryDirs())
    for (const auto &path : filesUnder(dir, ".stpm")) {
      const SourceFile &file = *sources_.add(path.string(), readFile(path), /*isLibrary=*/true);
      ok &= macros_.addFile(file, opts_.parse, diags_);
      diags_.flush(/*countParseErrors=*/false);
    }
  return ok;
}

bool Frontend::parseFile(const SourceFile &file) {
  if (!macrosLoaded_)
    macrosLoaded_ = loadLibraryMacros();
  ParseOptions opts = opts_.parse;
  opts.libraryMacros = &macros_; // not stored in opts_, which a moved Frontend would leave dangling
  bool ok = parseScript(file, opts, diags_, script_);
  diags_.flush();
  return ok && *macrosLoaded_;
}

bool Frontend::parseUserScript(std::string name, std::string text) {
  return parseFile(*sources_.add(std::move(name), std::move(text)));
}

std::vector<std::string> Frontend::libraryDirs() const {
  std::vector<std::string> dirs;
  if (opts_.loadStdlib) {
    // An installed sonde uses its installed tapsets; a build tree uses the source's.
    if (const char *env = std::getenv("SONDE_STDLIB_DIR"))
      dirs.emplace_back(env);
    else if (fs::is_directory(SONDE_STDLIB_DIR))
      dirs.emplace_back(SONDE_STDLIB_DIR);
    else
      dirs.emplace_back(SONDE_SOURCE_STDLIB_DIR);
  }
  dirs.insert(dirs.end(), opts_.includeDirs.begin(), opts_.includeDirs.end());
  return dirs;
}

bool Frontend::parseLibraries() {
  bool ok = true;
  for (const auto &dir : libraryDirs()) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) {
      diags_.parseError("tapset directory '" + dir + "' not found");
      diags_.flush();
      ok = false;
      continue;
    }
    for (const auto &path : filesUnder(dir, ".probe"))
      ok &= parseFile(*sources_.add(path.string(), readFile(path), /*isLibrary=*/true));
  }
  return ok;
}

bool Frontend::elaborate() {
  bool ok = sonde::elaborate(script_, diags_, opts_.sema);
  diags_.flush();
  return ok;
}

} // namespace sonde
