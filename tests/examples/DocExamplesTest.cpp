// The `sonde` commands README.md, docs/*.md and the man page show, run here:
// each prints what its document shows, in shape (the same lines in the same
// order, numbers and absolute paths aside; a line with "..." stands for output
// left out), or,
// where the document shows no output, prints something. A block with a command
// that cannot run here (-x of a running process, a program of the reader's
// such as ./app) is skipped with the reason.
//
// Markdown: fenced blocks with a "$ sonde" command; their lines starting "$ "
// (continued while a quote is open or the line ends with a backslash) are run
// in order, each followed by its output. The man page: the `.nf` blocks of
// EXAMPLES. Commands run under `sh -c` (stderr with stdout, as a terminal shows
// them) in a scratch directory of their block's, holding the demo targets
// (./request_server, ...) and `examples/`, with `sonde` on PATH.
#include "ExampleRun.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

namespace sonde::examples {
namespace {

namespace fs = std::filesystem;

struct Step {
  std::string command;
  std::vector<std::string> output; // as shown
  bool showsOutput = false;
};

// The commands of one block, run in order in one scratch directory.
struct DocBlock {
  std::string where; // "README.md:37", its first command's line
  std::vector<Step> steps;
  std::string skip; // why it cannot run here, or ""
};

void PrintTo(const DocBlock &b, std::ostream *os) { *os << b.where; }

std::string repoDir() { return fs::path(SONDE_EXAMPLES_DIR).parent_path().string(); }

std::vector<std::string> fileLines(const std::string &path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);)
    lines.push_back(line);
  return lines;
}

// Whether `text` leaves a quote open (a shell word continued on the next line).
bool quoteOpen(const std::string &text) {
  char open = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (open) {
      if (c == open)
        open = 0;
      else if (c == '\\' && open == '"')
        ++i;
    } else if (c == '\'' || c == '"') {
      open = c;
    } else if (c == '\\') {
      ++i;
    }
  }
  return open != 0;
}

bool continues(const std::string &text) {
  return quoteOpen(text) || (!text.empty() && text.back() == '\\');
}

// Why `command` cannot run here, or "": files it names must exist (./NAME
// among the demo targets, or in the repository, where `examples/` is).
std::string skipReason(const std::string &command) {
  if (std::regex_search(command, std::regex("(^|\\s)-x\\s")))
    return "attaches to a running process (-x)";
  static const std::regex path("(\\./[A-Za-z0-9_./-]+|/[A-Za-z0-9_.][A-Za-z0-9_./-]*|"
                               "\\b[A-Za-z0-9_-]+\\.probe\\b)");
  for (auto it = std::sregex_iterator(command.begin(), command.end(), path);
       it != std::sregex_iterator(); ++it) {
    std::string p = (*it)[1];
    bool found = p[0] == '/' ? fs::exists(p)
                             : fs::exists(fs::path(SONDE_EXAMPLE_TARGETS_DIR) / p) ||
                                   fs::exists(fs::path(repoDir()) / p);
    if (!found)
      return "needs " + p + ", which is not here";
  }
  return "";
}

void addBlock(std::vector<DocBlock> &out, DocBlock block) {
  if (block.steps.empty())
    return;
  for (const Step &s : block.steps)
    if (block.skip.empty())
      block.skip = skipReason(s.command);
  out.push_back(std::move(block));
}

// Fenced blocks with "$ sonde" commands.
void addMarkdown(const std::string &name, std::vector<DocBlock> &out) {
  std::vector<std::string> lines = fileLines(repoDir() + "/" + name);
  bool inBlock = false;
  DocBlock block;
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string &line = lines[i];
    if (line.rfind("```", 0) == 0) {
      inBlock = !inBlock;
      bool hasSonde = false;
      for (const Step &s : block.steps)
        hasSonde =
            hasSonde || std::regex_search(s.command, std::regex("^([A-Z_]+=\\S+ )*sonde\\b"));
      if (!inBlock && hasSonde)
        addBlock(out, std::move(block));
      block = DocBlock{};
      continue;
    }
    if (!inBlock)
      continue;
    if (line.rfind("$ ", 0) != 0) {
      if (!block.steps.empty()) {
        block.steps.back().output.push_back(line);
        block.steps.back().showsOutput = true;
      }
      continue;
    }
    if (block.steps.empty())
      block.where = name + ":" + std::to_string(i + 1);
    std::string command = line.substr(2);
    while (continues(command) && i + 1 < lines.size())
      command += "\n" + lines[++i];
    block.steps.push_back({command, {}, false});
  }
}

// The man page's EXAMPLES: one command per `.nf` block, no output shown.
void addManPage(std::vector<DocBlock> &out) {
  std::vector<std::string> lines = fileLines(repoDir() + "/docs/sonde.1");
  bool inExamples = false;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].rfind(".SH", 0) == 0)
      inExamples = lines[i] == ".SH EXAMPLES";
    if (!inExamples || lines[i] != ".nf")
      continue;
    size_t first = i + 1;
    std::string command;
    for (++i; i < lines.size() && lines[i] != ".fi"; ++i)
      command += (command.empty() ? "" : "\n") + lines[i];
    command = std::regex_replace(command, std::regex("\\\\-"), "-");
    command = std::regex_replace(command, std::regex("^\\s+"), "");
    addBlock(out,
             DocBlock{"docs/sonde.1:" + std::to_string(first + 1), {{command, {}, false}}, ""});
  }
}

std::vector<DocBlock> allExamples() {
  std::vector<DocBlock> out;
  addMarkdown("README.md", out);
  std::vector<std::string> docs;
  for (const auto &entry : fs::directory_iterator(repoDir() + "/docs"))
    if (entry.path().extension() == ".md")
      docs.push_back("docs/" + entry.path().filename().string());
  std::sort(docs.begin(), docs.end());
  for (const std::string &d : docs)
    addMarkdown(d, out);
  addManPage(out);
  return out;
}

// A scratch directory with the demo targets, `examples/` and `sonde` in bin/.
class Scratch {
public:
  Scratch() {
    char tmpl[] = "/tmp/sonde-doc-example-XXXXXX";
    if (!mkdtemp(tmpl))
      return;
    dir_ = tmpl;
    std::error_code ec;
    for (const auto &entry : fs::directory_iterator(SONDE_EXAMPLE_TARGETS_DIR, ec))
      if (entry.is_regular_file() &&
          (entry.status().permissions() & fs::perms::owner_exec) != fs::perms::none)
        fs::create_symlink(entry.path(), dir_ / entry.path().filename(), ec);
    fs::create_symlink(SONDE_EXAMPLES_DIR, dir_ / "examples", ec);
    fs::create_directory(dir_ / "bin", ec);
    fs::create_symlink(SONDE_BINARY, dir_ / "bin" / "sonde", ec);
  }
  ~Scratch() {
    std::error_code ec;
    if (!dir_.empty())
      fs::remove_all(dir_, ec);
  }
  const fs::path &dir() const { return dir_; }

private:
  fs::path dir_;
};

// A line's shape: its text with every number as N and every absolute path as
// /P (the document's machine is not this one).
std::string shape(const std::string &line) {
  std::string s = std::regex_replace(line, std::regex("(^|[\\s\"'(])/[^\\s\"'()]+"), "$1/P");
  return std::regex_replace(s, std::regex("[0-9]+(\\.[0-9]+)?"), "N");
}

// The shown lines (those without "...") missing, in order, from the output.
std::vector<std::string> missingLines(const std::vector<std::string> &shown,
                                      const std::vector<std::string> &actual) {
  std::vector<std::string> missing;
  size_t at = 0;
  for (const std::string &line : shown) {
    if (line.find("...") != std::string::npos || line.empty())
      continue;
    size_t found = at;
    while (found < actual.size() && shape(actual[found]) != shape(line))
      ++found;
    if (found == actual.size()) {
      missing.push_back(line);
      continue;
    }
    at = found + 1;
  }
  return missing;
}

class DocExamples : public ::testing::TestWithParam<DocBlock> {};

TEST_P(DocExamples, PrintWhatTheyShow) {
  const DocBlock &b = GetParam();
  if (!b.skip.empty())
    GTEST_SKIP() << b.where << ": " << b.skip;
  Scratch scratch;
  ASSERT_FALSE(scratch.dir().empty());
  std::string path = (scratch.dir() / "bin").string() + ":" + std::getenv("PATH");
  for (const Step &s : b.steps) {
    auto r = test::runProcess("/usr/bin/env", {"PATH=" + path, "sh", "-c", s.command + " 2>&1"},
                              scratch.dir().string(), std::chrono::seconds(120));
    std::string where = b.where + ": $ " + s.command + "\n";
    ASSERT_TRUE(r.exited && r.exitCode == 0) << where << describe(r);
    if (!s.showsOutput) {
      EXPECT_FALSE(r.stdoutText.empty()) << where << "prints nothing";
      continue;
    }
    std::vector<std::string> missing = missingLines(s.output, test::linesOf(r.stdoutText));
    std::string list;
    for (const std::string &m : missing)
      list += "  " + m + "\n";
    EXPECT_TRUE(missing.empty()) << where << "the document shows lines it does not print:\n"
                                 << list << "it printed:\n"
                                 << r.stdoutText.substr(0, 4000);
  }
}

std::string exampleName(const ::testing::TestParamInfo<DocBlock> &info) {
  std::string name = info.param.where;
  for (char &c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)))
      c = '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(Docs, DocExamples, ::testing::ValuesIn(allExamples()), exampleName);

} // namespace
} // namespace sonde::examples
