// print/println/printd/printdln and the sprint forms.
#include "runtime/format/FormatAbi.h"

#include <gtest/gtest.h>

#include <climits>
#include <string>
#include <vector>

namespace {

SondeValue num(int64_t v) { return SondeValue{SONDE_VALUE_LONG, v, nullptr}; }
SondeValue str(const char *s) { return SondeValue{SONDE_VALUE_STRING, 0, s}; }

std::string print(const std::vector<SondeValue> &values, const char *delimiter, bool newline,
                  size_t cap = SONDE_PRINT_BUFFER_SIZE) {
  std::string out(cap, '\x7e');
  const size_t n =
      sonde_print_values(values.data(), values.size(), delimiter, newline, out.data(), cap);
  EXPECT_LE(n, cap);
  return out.substr(0, n);
}

std::string sprint(const std::vector<SondeValue> &values, const char *delimiter, bool newline,
                   size_t cap = 512) {
  std::string out(cap, '\x7e');
  const size_t n =
      sonde_sprint_values(values.data(), values.size(), delimiter, newline, out.data(), cap);
  EXPECT_EQ(out[n], '\0');
  return out.substr(0, n);
}

TEST(FormatPrintValues, PrintConcatenates) {
  // [stap-ref] print(1, "a", 2); println("x", 3); printd(", ", 1, "two", 3); printdln("|", "a", 5)
  EXPECT_EQ(print({num(1), str("a"), num(2)}, nullptr, false), "1a2");
  EXPECT_EQ(print({str("x"), num(3)}, nullptr, true), "x3\n");
  EXPECT_EQ(print({num(1), str("two"), num(3)}, ", ", false), "1, two, 3");
  EXPECT_EQ(print({str("a"), num(5)}, "|", true), "a|5\n");
}

TEST(FormatPrintValues, LongsAreDecimal) {
  EXPECT_EQ(print({num(-42), num(LLONG_MIN), num(0)}, " ", false), "-42 -9223372036854775808 0");
}

TEST(FormatPrintValues, DelimiterIsLiteral) {
  EXPECT_EQ(print({num(1), num(2)}, "%d%%", false), "1%d%%2");
}

TEST(FormatPrintValues, SprintFormsAreStrings) {
  // [stap-ref] sprint(42, "z")
  EXPECT_EQ(sprint({num(42), str("z")}, nullptr, false), "42z");
  EXPECT_EQ(sprint({num(1), num(2)}, "-", true), "1-2\n");
  EXPECT_EQ(sprint({}, nullptr, true), "\n");
  EXPECT_EQ(sprint({str("abcdef"), num(123)}, nullptr, false, 6), "abcde");
}

TEST(FormatPrintValues, PrintStopsAtTheBuffer) {
  EXPECT_EQ(print({str("abc"), str("def")}, ",", true, 5), "abc,d");
}

} // namespace
