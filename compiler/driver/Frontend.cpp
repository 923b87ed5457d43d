#include "driver/Frontend.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string_view>

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

bool isWordStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool isWordChar(char c) { return isWordStart(c) || std::isdigit(static_cast<unsigned char>(c)); }

// Every identifier-like word of `text`, added to `words`.
void addWords(std::string_view text, std::set<std::string> &words) {
  for (size_t i = 0; i < text.size();) {
    if (!isWordStart(text[i])) {
      ++i;
      continue;
    }
    size_t start = i;
    while (i < text.size() && isWordChar(text[i]))
      ++i;
    words.emplace(text.substr(start, i - start));
  }
}

// What a tapset file defines, found without parsing it: the first name of each
// probe alias (`probe syscall.open = ...` defines `syscall`), each function and
// each global.
std::set<std::string> definedNames(std::string_view text) {
  std::set<std::string> names;
  auto wordAt = [&](size_t i) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t'))
      ++i;
    size_t start = i;
    while (i < text.size() && isWordChar(text[i]))
      ++i;
    return std::string(text.substr(start, i - start));
  };
  for (size_t line = 0; line < text.size();) {
    size_t end = text.find('\n', line);
    if (end == std::string_view::npos)
      end = text.size();
    std::string_view l = text.substr(line, end - line);
    size_t first = l.find_first_not_of(" \t");
    for (std::string_view keyword : {"probe ", "function ", "global ", "private "})
      if (first != std::string_view::npos && l.substr(first, keyword.size()) == keyword) {
        std::string name = wordAt(line + first + keyword.size());
        if (name == "global" || name == "function")
          name = wordAt(line + first + keyword.size() + name.size() + 1);
        if (!name.empty())
          names.insert(name);
      }
    // `global a, b, c`: the names after the first too.
    if (first != std::string_view::npos &&
        (l.substr(first, 7) == "global " || l.substr(first, 15) == "private global "))
      addWords(l.substr(l.find("global ") + 7), names);
    line = end + 1;
  }
  return names;
}

} // namespace

Frontend::Frontend(std::ostream &diagOut, FrontendOptions opts)
    : opts_(std::move(opts)), diags_(diagOut) {}

bool Frontend::loadLibraryMacros() {
  bool ok = true;
  for (const auto &dir : libraryDirs())
    for (const auto &path : filesUnder(dir, ".stpm")) {
      const SourceFile &file = *sources_.add(path.string(), readFile(path), /*isLibrary=*/true);
      addWords(file.text, referencedWords_); // what the macros expand to may be used
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
  addWords(text, referencedWords_);
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

bool Frontend::parseLibraries(LibraryParse which) {
  struct Candidate {
    fs::path path;
    std::string text;
    std::set<std::string> defines;
  };
  std::vector<Candidate> candidates;
  bool ok = true;
  for (const auto &dir : libraryDirs()) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) {
      diags_.parseError("tapset directory '" + dir + "' not found");
      diags_.flush();
      ok = false;
      continue;
    }
    for (const auto &path : filesUnder(dir, ".probe")) {
      std::string text = readFile(path);
      std::set<std::string> defines = definedNames(text);
      candidates.push_back({path, std::move(text), std::move(defines)});
    }
  }
  // A file is parsed once something parsed so far (the user's scripts, the
  // macro library, the files taken) names what it defines: most runs need few
  // of the tapsets (syscalls.probe alone is thousands of lines).
  std::set<std::string> referenced = referencedWords_;
  for (bool changed = true; changed;) {
    changed = false;
    for (Candidate &c : candidates) {
      if (c.path.empty())
        continue;
      bool needed = which == LibraryParse::All ||
                    std::any_of(c.defines.begin(), c.defines.end(),
                                [&](const std::string &n) { return referenced.count(n) != 0; });
      if (!needed)
        continue;
      addWords(c.text, referenced);
      ok &= parseFile(*sources_.add(c.path.string(), std::move(c.text), /*isLibrary=*/true));
      c.path.clear();
      changed = true;
    }
  }
  return ok;
}

bool Frontend::elaborate() {
  bool ok = sonde::elaborate(script_, diags_, opts_.sema);
  diags_.flush();
  return ok;
}

} // namespace sonde
