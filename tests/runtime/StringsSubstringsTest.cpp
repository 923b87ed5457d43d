// strlen, substr, stringat, isinstr, strpos, str_replace, tokenize, strtol,
// isdigit: the C bodies of stap's tapset/string.stp and tokenize.stp.
#include "StringsTestSupport.h"
#include "runtime/strings/StringAbi.h"

#include <gtest/gtest.h>

#include <climits>
#include <string>

using sonde::test::stringResult;

namespace {

std::string substr(const char *s, int64_t start, int64_t length, size_t cap = 512) {
  return stringResult([&](char *o, size_t c) { return sonde_str_substr(s, start, length, o, c); },
                      cap);
}

std::string replace(const char *s, const char *find, const char *with, size_t cap = 512) {
  return stringResult([&](char *o, size_t c) { return sonde_str_replace(s, find, with, o, c); },
                      cap);
}

TEST(StringsSubstrings, Strlen) {
  EXPECT_EQ(sonde_str_strlen(""), 0);
  EXPECT_EQ(sonde_str_strlen("hello"), 5);
  EXPECT_EQ(sonde_str_strlen("\xc3\xa9"), 2); // bytes, not characters
}

TEST(StringsSubstrings, Substr) {
  EXPECT_EQ(substr("hello", 1, 3), "ell");
  EXPECT_EQ(substr("hello", 0, 100), "hello");
  EXPECT_EQ(substr("hello", 4, 1), "o");
  EXPECT_EQ(substr("hello", 5, 1), "");  // start past the end
  EXPECT_EQ(substr("hello", -1, 2), ""); // negative start
  EXPECT_EQ(substr("hello", 2, 0), "");
  EXPECT_EQ(substr("hello", 2, -5), "");
  // stap computes length + 1, which wraps for LLONG_MAX: nothing is copied.
  EXPECT_EQ(substr("hello", 0, LLONG_MAX), "");
  EXPECT_EQ(substr("hello", 1, LLONG_MAX - 1), "ello");
  EXPECT_EQ(substr("abcdefghij", 2, 100, 5), "cdef"); // at most MAXSTRINGLEN - 1
}

TEST(StringsSubstrings, Stringat) {
  int64_t c = 99;
  EXPECT_EQ(sonde_str_stringat("abc", 1, &c), nullptr);
  EXPECT_EQ(c, 'b');
  EXPECT_STREQ(sonde_str_stringat("abc", 3, &c), "Position out of bounds");
  EXPECT_EQ(c, 0);
  EXPECT_STREQ(sonde_str_stringat("abc", -1, &c), "Position out of bounds");
  EXPECT_STREQ(sonde_str_stringat("", 0, &c), "Position out of bounds");
  EXPECT_EQ(sonde_str_stringat("\xff", 0, &c), nullptr);
  EXPECT_EQ(c, -1); // a signed char, as on stap/x86
}

TEST(StringsSubstrings, IsinstrAndStrpos) {
  EXPECT_EQ(sonde_str_isinstr("hello", "ll"), 1);
  EXPECT_EQ(sonde_str_isinstr("hello", "lo!"), 0);
  EXPECT_EQ(sonde_str_isinstr("hello", ""), 1);
  EXPECT_EQ(sonde_str_isinstr("", "a"), 0);
  EXPECT_EQ(sonde_str_strpos("hello", "l"), 2);
  EXPECT_EQ(sonde_str_strpos("hello", "z"), -1);
  EXPECT_EQ(sonde_str_strpos("hello", ""), 0);
  EXPECT_EQ(sonde_str_strpos("hello", "hello"), 0);
}

TEST(StringsSubstrings, StrReplace) {
  EXPECT_EQ(replace("aXbXc", "X", "yy"), "ayybyyc");
  EXPECT_EQ(replace("aaa", "aa", "b"), "ba"); // left to right, no overlaps
  EXPECT_EQ(replace("abc", "", "Z"), "abc");
  EXPECT_EQ(replace("abc", "abc", ""), "");
  EXPECT_EQ(replace("abc", "x", "y"), "abc");
  EXPECT_EQ(replace("abc", "b", "123456", 8), "a123456"); // strlcat stops at MAXSTRINGLEN
}

TEST(StringsSubstrings, TokenizeKeepsItsPlace) {
  char storage[512];
  SondeTokenizer t{storage, sizeof storage, 0, 0};
  auto next = [&](const char *input, const char *delim) {
    return stringResult(
        [&](char *o, size_t c) { return sonde_str_tokenize(&t, input, delim, o, c); });
  };
  EXPECT_EQ(next("", ","), ""); // nothing tokenized yet
  EXPECT_EQ(next("a,b,,c", ","), "a");
  EXPECT_EQ(next("", ","), "b");
  EXPECT_EQ(next("", ","), "c"); // empty tokens are skipped
  EXPECT_EQ(next("", ","), "");
  EXPECT_EQ(next("", ","), "");
  EXPECT_EQ(next(" one  two", " "), "one"); // new input starts over
  EXPECT_EQ(next("", " \t"), "two");
  EXPECT_EQ(next("x:y;z", ":;"), "x"); // any byte of delim separates
  EXPECT_EQ(next("", ":;"), "y");
  EXPECT_EQ(next("", ""), "z"); // no delimiters: the rest is one token
  EXPECT_EQ(next("", ""), "");
}

TEST(StringsSubstrings, TokenizeCopiesAtMostItsStorage) {
  char storage[8];
  SondeTokenizer t{storage, sizeof storage, 0, 0};
  char out[64];
  sonde_str_tokenize(&t, "abcdefghijkl", ",", out, sizeof out);
  EXPECT_STREQ(out, "abcdefg");
}

TEST(StringsSubstrings, StrtolFollowsTheKernel) {
  EXPECT_EQ(sonde_str_strtol("123", 10), 123);
  EXPECT_EQ(sonde_str_strtol("-42", 10), -42);
  EXPECT_EQ(sonde_str_strtol("0x1f", 0), 31);
  EXPECT_EQ(sonde_str_strtol("0X1A", 0), 26);
  EXPECT_EQ(sonde_str_strtol("0x1f", 16), 31);
  EXPECT_EQ(sonde_str_strtol("1f", 16), 31);
  EXPECT_EQ(sonde_str_strtol("017", 0), 15);
  EXPECT_EQ(sonde_str_strtol("0x", 0), 0); // "0x" without a hex digit is octal 0
  EXPECT_EQ(sonde_str_strtol("12abc", 10), 12);
  EXPECT_EQ(sonde_str_strtol("9", 8), 0);
  EXPECT_EQ(sonde_str_strtol("  12", 10), 0); // no whitespace skipping
  EXPECT_EQ(sonde_str_strtol("+5", 10), 0);   // nor a '+'
  EXPECT_EQ(sonde_str_strtol("", 10), 0);
  EXPECT_EQ(sonde_str_strtol("zz", 36), 0); // digits stop at 'f' whatever the base
  EXPECT_EQ(sonde_str_strtol("ff", 36), 555);
  EXPECT_EQ(sonde_str_strtol("18446744073709551615", 10), -1); // wraps, no overflow error
  EXPECT_EQ(sonde_str_strtol("-9223372036854775808", 10), LLONG_MIN);
  EXPECT_EQ(sonde_str_strtol("101", 2), 5);
}

TEST(StringsSubstrings, Isdigit) {
  EXPECT_EQ(sonde_str_isdigit("1a"), 1);
  EXPECT_EQ(sonde_str_isdigit("9"), 1);
  EXPECT_EQ(sonde_str_isdigit("a1"), 0);
  EXPECT_EQ(sonde_str_isdigit(""), 0);
  EXPECT_EQ(sonde_str_isdigit("-1"), 0);
}

} // namespace
