// text_str, text_strn, string_quoted, user_buffer_quoted: stap's _stp_text_str.
// Expectations marked [stap-ref] were printed by stap-ref; the others by stap's
// _stp_text_str (runtime/stp_string.c, systemtap 4.8) compiled on the same inputs.
#include "StringsTestSupport.h"
#include "runtime/strings/StringAbi.h"

#include <gtest/gtest.h>

#include <string>

using sonde::test::stringResult;

namespace {

std::string textStr(const char *s, size_t cap = 512) {
  return stringResult([&](char *o, size_t c) { return sonde_str_text_str(s, o, c); }, cap);
}
std::string textStrn(const char *s, int64_t len, int64_t quoted) {
  return stringResult([&](char *o, size_t c) { return sonde_str_text_strn(s, len, quoted, o, c); });
}
std::string quoted(const char *s, size_t cap = 512) {
  return stringResult([&](char *o, size_t c) { return sonde_str_string_quoted(s, o, c); }, cap);
}

TEST(StringsTextEscape, TextStr) {
  EXPECT_EQ(textStr("a\tb"), "a\\tb"); // [stap-ref]
  EXPECT_EQ(textStr("plain text"), "plain text");
  EXPECT_EQ(textStr("\"q\\"), "\\\"q\\\\");
  EXPECT_EQ(textStr("\a\b\f\n\r\v"), "\\a\\b\\f\\n\\r\\v");
  EXPECT_EQ(textStr("x\xff\x01\x7f"), "x\\377\\001\\177");
  EXPECT_EQ(textStr("'"), "'");
}

TEST(StringsTextEscape, Utf8BecomesCodePoints) {
  EXPECT_EQ(textStr("caf\xc3\xa9"), "caf\\u00E9");
  EXPECT_EQ(textStr("\xe2\x82\xac"), "\\u20AC");
  EXPECT_EQ(textStr("\xf0\x9f\x98\x80"), "\\U0001F600");
  // Not well-formed: byte by byte.
  EXPECT_EQ(textStr("\xc3("), "\\303(");                          // bad continuation
  EXPECT_EQ(textStr("\xc0\x80"), "\\300\\200");                   // overlong
  EXPECT_EQ(textStr("\xed\xa0\x80"), "\\355\\240\\200");          // a surrogate
  EXPECT_EQ(textStr("\xf4\x90\x80\x80"), "\\364\\220\\200\\200"); // above U+10FFFF
}

TEST(StringsTextEscape, TextStrStopsBeforeMaxStringLen) {
  const std::string tabs(511, '\t');
  EXPECT_EQ(textStr(tabs.c_str()).size(), 510u); // 255 "\t" fit in 511 bytes
}

TEST(StringsTextEscape, TextStrnLimitsAndQuotes) {
  EXPECT_EQ(textStrn("hello world", 5, 0), "hello");
  EXPECT_EQ(textStrn("hello world", 0, 0), "hello world");
  EXPECT_EQ(textStrn("hello world", -3, 0), "hello world");
  EXPECT_EQ(textStrn("hello", 7, 1), "\"hello\"");
  EXPECT_EQ(textStrn("hello world", 8, 1), "\"hel\"...");
  EXPECT_EQ(textStrn("hello", 6, 1), "\"h\"...");
  EXPECT_EQ(textStrn("hello world", 3, 1), "\"\"..."); // quoted output is at least 5 wide
  // A cut never splits an escape: the whole "\t" or "\u00E9" goes.
  EXPECT_EQ(textStrn("ab\tcdef", 6, 1), "\"a\"...");
  EXPECT_EQ(textStrn("a\xc3\xa9zzzz", 8, 1), "\"a\"...");
}

TEST(StringsTextEscape, StringQuoted) {
  EXPECT_EQ(quoted("a\"b"), "\"a\\\"b\""); // [stap-ref]
  EXPECT_EQ(quoted(""), "\"\"");
  const std::string x(511, 'x');
  const std::string q = quoted(x.c_str());
  EXPECT_EQ(q.size(), 511u);
  EXPECT_EQ(q.substr(q.size() - 6), "xx\"...");
}

// user_buffer_quoted: _stp_text_str with buffer=1 (4.8) on the same bytes, of
// which the first `readable` could be read (a fault past them).
std::string bufferQuoted(const std::string &bytes, int64_t readable, int64_t inlen,
                         int64_t outlen) {
  char out[512];
  if (sonde_str_buffer_quoted(bytes.data(), readable, inlen, outlen, out, sizeof out) < 0)
    return "FAULT";
  return out;
}

TEST(StringsTextEscape, BufferQuotedGoesPastNuls) {
  using namespace std::string_literals;
  EXPECT_EQ(bufferQuoted("hello\0world"s, 12, 12, 100), "\"hello\\0world\\0\"");
  EXPECT_EQ(bufferQuoted("a\0"s
                         "6b",
                         4, 4, 100),
            "\"a\\06b\"");
  EXPECT_EQ(bufferQuoted("\x01\x7f\xff\n", 4, 4, 100), "\"\\001\\177\\377\\n\"");
  // A NUL counts 4 bytes of outlen, as stap's \ooo escapes do.
  EXPECT_EQ(bufferQuoted("abc\0\0\0\0\0"s, 8, 8, 10), "\"abc\\0\"");
  EXPECT_EQ(bufferQuoted("with spaces and \"quotes\"", 25, 25, 12), "\"with sp\"...");
  EXPECT_EQ(bufferQuoted("caf\xc3\xa9 na\xc3\xafve", 13, 13, 12), "\"caf\"...");
}

TEST(StringsTextEscape, BufferQuotedFaultsPastTheReadableBytes) {
  EXPECT_EQ(bufferQuoted("abcdef", 3, 6, 100), "FAULT");
  EXPECT_EQ(bufferQuoted("ab\xc3\xa9", 3, 4, 100), "FAULT"); // within a UTF-8 sequence
  EXPECT_EQ(bufferQuoted("abcdef", 3, 6, 5), "FAULT");       // stap reads before it stops
  EXPECT_EQ(bufferQuoted("abcdef", 3, 3, 100), "\"abc\"");
}

} // namespace
