// Helpers for the pass-2 tests: parse a user script (plus optional tapset
// files) and elaborate it, keeping everything the tests look at.
#pragma once

#include "ast/Ast.h"
#include "sema/Elaborate.h"

#include <memory>
#include <string>
#include <unistd.h>
#include <utility>
#include <vector>

// Marker probe points need a real binary with SDT notes: Debian's python3.11 has
// them (function__entry with 3 arguments, gc__start and gc__done with 1).
#define SKIP_WITHOUT_PYTHON_MARKERS()                                                              \
  do {                                                                                             \
    if (access("/usr/bin/python3.11", R_OK) != 0)                                                  \
      GTEST_SKIP() << "needs /usr/bin/python3.11 and its SDT markers";                             \
  } while (0)

namespace sonde::test {

struct Elaborated {
  std::vector<std::unique_ptr<SourceFile>> files;
  ast::Script script;
  bool parsed = false;
  bool ok = false;
  std::string diagnostics; // exactly as the driver prints them

  const ast::GlobalDecl *global(const std::string &name) const;
  const ast::FunctionDecl *function(const std::string &name) const;
  // The type of local `name` in derived probe `probe` (0 = first).
  ast::Type localType(const std::string &name, size_t probe = 0) const;
  // Each derived probe's concrete point, e.g. "timer.s(1)".
  std::vector<std::string> points() const;
};

// `library` holds (file name, text) pairs parsed as tapset files.
Elaborated elaborateText(const std::string &user,
                         const std::vector<std::pair<std::string, std::string>> &library = {},
                         const SemaOptions &opts = {});

// Just the diagnostics of elaborating `user` (parse errors included).
std::string semaDiagnostics(const std::string &user, const SemaOptions &opts = {});

} // namespace sonde::test
