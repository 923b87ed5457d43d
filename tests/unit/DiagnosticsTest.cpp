#include "diag/Diagnostics.h"

#include <gtest/gtest.h>

#include <sstream>

namespace {

using sonde::Token;
using sonde::TokenKind;

TEST(Diagnostics, ParseErrorWithSawToken) {
  sonde::SourceManager sm;
  auto *f = sm.add("app.probe", "probe begin {\n  n = (1\n  println(n)\n}\n");
  std::ostringstream out;
  sonde::DiagnosticEngine d(out);
  d.parseError("expected ')'", Token{TokenKind::Identifier, "println", {f, 3, 3}}, true);
  d.flush();
  EXPECT_EQ(out.str(), "parse error: expected ')'\n"
                       "        saw: identifier 'println' at app.probe:3:3\n"
                       "     source:   println(n)\n"
                       "               ^\n"
                       "\n"
                       "1 parse error.\n");
}

TEST(Diagnostics, EveryLocationNamesItsFile) {
  sonde::SourceManager sm;
  auto *f = sm.add("app.probe", "global last\nprobe begin {\n\tlast = \"x\"\n\tlast++\n}\n");
  std::ostringstream out;
  sonde::DiagnosticEngine d(out);
  auto &e =
      d.semanticError("type mismatch (long)", Token{TokenKind::Identifier, "last", {f, 4, 2}});
  e.chain.push_back({sonde::DiagKind::SemanticError,
                     "type was first inferred here (string)",
                     Token{TokenKind::Identifier, "last", {f, 3, 2}},
                     false,
                     {}});
  d.flush();
  EXPECT_EQ(out.str(), "semantic error: type mismatch (long): identifier 'last' at app.probe:4:2\n"
                       "        source: \tlast++\n"
                       "                \t^\n"
                       "\n"
                       "semantic error: type was first inferred here (string): identifier "
                       "'last' at app.probe:3:2\n"
                       "        source: \tlast = \"x\"\n"
                       "                \t^\n"
                       "\n");
  EXPECT_EQ(d.semanticErrors(), 1u);
}

TEST(Diagnostics, DuplicatesAreSuppressedUnlessVerbose) {
  sonde::SourceManager sm;
  auto *f = sm.add("a.probe", "probe begin { foo() }\n");
  Token t{TokenKind::Identifier, "foo", {f, 1, 15}};
  for (bool verbose : {false, true}) {
    std::ostringstream out;
    sonde::DiagnosticEngine d(out);
    d.setVerbose(verbose);
    d.semanticError("unresolved function foo", t);
    d.semanticError("unresolved function foo", t);
    d.flush();
    bool suppressed = out.str().find("Number of similar error messages suppressed: 1.\n"
                                     "Rerun with -v to see them.\n") != std::string::npos;
    EXPECT_EQ(suppressed, !verbose);
  }
}

TEST(Diagnostics, WarningsCanBeSilencedOrPromoted) {
  std::ostringstream out;
  sonde::DiagnosticEngine quiet(out);
  quiet.setSuppressWarnings(true);
  quiet.warning("never-assigned local variable 'x'");
  quiet.flush();
  EXPECT_EQ(out.str(), "");

  sonde::DiagnosticEngine strict(out);
  strict.setWarningsAreErrors(true);
  strict.warning("never-assigned local variable 'x'");
  EXPECT_TRUE(strict.hasErrors());
}

TEST(Diagnostics, KeywordsPrintNoTextAndEofNamesTheFile) {
  sonde::SourceManager sm;
  auto *f = sm.add("k.probe", "probe begin { if }");
  std::ostringstream out;
  sonde::DiagnosticEngine d(out);
  d.parseError("expected '('", Token{TokenKind::EndOfFile, "", {f, 1, 19}}, true);
  d.parseError("unexpected keyword", Token{TokenKind::Keyword, "if", {f, 1, 15}});
  d.flush();
  EXPECT_NE(out.str().find("        saw: k.probe EOF\n"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("         at: keyword at k.probe:1:15\n"), std::string::npos)
      << out.str();
  EXPECT_NE(out.str().find("2 parse errors.\n"), std::string::npos);
}

// stap's weights (util.cxx levenshtein): 2 per edit inside the strings, 1 for a
// change of case, and 1 per character of a dropped or added prefix.
TEST(Diagnostics, SuggestionScore) {
  EXPECT_EQ(sonde::suggestionScore("timer", "timer"), 0u);
  EXPECT_EQ(sonde::suggestionScore("timre", "timer"), 4u);
  EXPECT_EQ(sonde::suggestionScore("kitten", "sitting"), 6u);
  EXPECT_EQ(sonde::suggestionScore("execname", "Execname"), 1u);
  EXPECT_EQ(sonde::suggestionScore("abcdef", "def"), 3u); // prefix: 1 each
  EXPECT_EQ(sonde::suggestionScore("abcdef", "abc"), 6u); // suffix: 2 each
  EXPECT_EQ(sonde::suggestionScore("compute_checksun", "pn"), 16u);
  EXPECT_EQ(sonde::suggestionScore("", "abc"), 3u);
}

// stap's levenshtein_suggest as elaborate.cxx uses it: the best five by score,
// however far, ties in byte order.
TEST(Diagnostics, SimilarNames) {
  // stap 4.8: `probe timer.scael(1)` -> (similar: s, sec, hz, ms, msec).
  const std::vector<std::string> timer = {"s",  "sec",  "ms", "msec",    "us",     "usec",
                                          "ns", "nsec", "hz", "jiffies", "profile"};
  EXPECT_EQ(sonde::similarNames("scael", timer), "s, sec, hz, ms, msec");
  EXPECT_EQ(sonde::similarNames("execnme", {"execname", "pexecname", "pid", "exit"}),
            "execname, pexecname, exit, pid");
  EXPECT_EQ(sonde::similarNames("zzzzzz", {"pid", "tid"}), "pid, tid"); // no threshold
  EXPECT_EQ(sonde::similarNames("pd", {"pid", "ped", "Pd"}), "Pd, ped, pid");
  // The name itself, empty names and repeats are not listed.
  EXPECT_EQ(sonde::similarNames("sec", {"sec", "", "s", "s", "ms"}), "s, ms");
  EXPECT_EQ(sonde::similarNames("scael", timer, 2), "s, sec");
  EXPECT_EQ(sonde::similarNames("x", {}), "");
}

} // namespace
