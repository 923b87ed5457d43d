// Runtime error messages and the closing lines of a failed run (language.md §7, §9).
#include "runtime/format/FormatAbi.h"

#include <gtest/gtest.h>

#include <string>

namespace {

template <typename F> std::string text(F f, size_t cap = 512) {
  std::string out(cap, '\x7e');
  const size_t n = f(out.data(), cap);
  EXPECT_LE(n, cap);
  return out.substr(0, n);
}

TEST(FormatErrorText, TokenDescriptions) {
  EXPECT_EQ(text([](char *o, size_t c) {
              return sonde_error_token("operator", "/", "app.probe", 9, 22, o, c);
            }),
            "operator '/' at app.probe:9:22");
  EXPECT_EQ(text([](char *o, size_t c) {
              return sonde_error_token("identifier", "count", "x.stp", 1, 5, o, c);
            }),
            "identifier 'count' at x.stp:1:5");
  EXPECT_EQ(text([](char *o, size_t c) {
              return sonde_error_token("keyword", "next", "x.stp", 3, 1, o, c);
            }),
            "keyword at x.stp:3:1");
}

TEST(FormatErrorText, ErrorLineAsInLanguageMd) {
  EXPECT_EQ(text([](char *o, size_t c) {
              return sonde_error_line("division by 0", "operator '/' at app.probe:9:22", nullptr, 0,
                                      "timer.s(1)", o, c);
            }),
            "ERROR: division by 0 near operator '/' at app.probe:9:22 in probe timer.s(1)\n");
}

TEST(FormatErrorText, ErrorLineWithCallChainAndWithoutPieces) {
  const char *chain[] = {"identifier 'f' at a.stp:7:3", "identifier 'g' at a.stp:9:1"};
  EXPECT_EQ(text([&](char *o, size_t c) {
              return sonde_error_line("MAXNESTING exceeded", "identifier 'h' at a.stp:2:5", chain,
                                      2, "begin", o, c);
            }),
            "ERROR: MAXNESTING exceeded near identifier 'h' at a.stp:2:5 (called from "
            "identifier 'f' at a.stp:7:3) (called from identifier 'g' at a.stp:9:1) in probe "
            "begin\n");
  EXPECT_EQ(text([](char *o, size_t c) {
              return sonde_error_line("boom", nullptr, nullptr, 0, nullptr, o, c);
            }),
            "ERROR: boom\n");
}

TEST(FormatErrorText, ClosingLines) {
  EXPECT_EQ(text([](char *o, size_t c) { return sonde_error_run_summary(1, 0, o, c); }),
            "WARNING: Number of errors: 1, skipped probes: 0\n");
  EXPECT_EQ(text([](char *o, size_t c) { return sonde_error_run_summary(0, 101, o, c); }),
            "WARNING: Number of errors: 0, skipped probes: 101\n");
  EXPECT_EQ(text([](char *o, size_t c) { return sonde_error_run_summary(0, 0, o, c); }), "");
  EXPECT_EQ(text([](char *o, size_t c) { return sonde_error_pass5_failed(o, c); }),
            "Pass 5: run failed.  [man error::pass5]\n");
  EXPECT_EQ(text([](char *o, size_t c) { return sonde_error_too_many_skipped(o, c); }),
            "ERROR: Skipped too many probes, check MAXSKIPPED or try again with stap -t for more "
            "details.\n");
}

TEST(FormatErrorText, TruncatesAtTheBuffer) {
  EXPECT_EQ(text([](char *o, size_t c) { return sonde_error_pass5_failed(o, c); }, 6), "Pass 5");
}

} // namespace
