// The -p1 round trip shared by the printer tests and the corpus test: parse a
// script, print it with printParsedScript, parse the printed text, and compare
// the two trees with dumpAst (and the two printed texts).
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace sonde::test {

struct PrintedScript {
  bool parsed = false;
  std::string diagnostics; // what the parser reported
  std::string dump;        // dumpAst of the parsed tree
  std::string printed;     // printParsedScript of it
};

// Parses `text` as file `name` the way `sonde -p1` does (the stdlib's library
// macros are visible, its *.probe files are not parsed) and prints it.
PrintedScript parseAndPrint(const std::string &name, const std::string &text,
                            const std::vector<std::string> &scriptArgs = {});

// Succeeds when `text` parses, its printed form parses to the same tree, and
// printing that tree gives the same text again. `printed` receives the text.
::testing::AssertionResult roundTrips(const std::string &name, const std::string &text,
                                      const std::vector<std::string> &scriptArgs = {},
                                      std::string *printed = nullptr);

} // namespace sonde::test
