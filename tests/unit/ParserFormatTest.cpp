// printf format strings (parse/FormatParser.cpp, language.md 5).
#include "parse/FormatParser.h"

#include <gtest/gtest.h>

namespace sonde::parse {
namespace {

using C = ast::FormatComponent;

TEST(ParserFormatTest, LiteralsAndConversions) {
  FormatParse p = parseFormat("a=%d b=%s%%\n");
  ASSERT_EQ(p.error, "");
  ASSERT_EQ(p.components.size(), 6u);
  EXPECT_EQ(p.components[0].conv, C::Conv::Literal);
  EXPECT_EQ(p.components[0].literal, "a=");
  EXPECT_EQ(p.components[1].conv, C::Conv::SignedDec);
  EXPECT_EQ(p.components[1].source, "%d");
  EXPECT_EQ(p.components[2].literal, " b=");
  EXPECT_EQ(p.components[3].conv, C::Conv::String);
  EXPECT_EQ(p.components[4].conv, C::Conv::Percent);
  EXPECT_EQ(p.components[5].literal, "\n");
  EXPECT_EQ(formatArgumentCount(p.components), 2u);
}

TEST(ParserFormatTest, EveryConversion) {
  const std::pair<const char *, C::Conv> all[] = {
      {"%d", C::Conv::SignedDec}, {"%i", C::Conv::SignedDec}, {"%u", C::Conv::UnsignedDec},
      {"%x", C::Conv::HexLower},  {"%X", C::Conv::HexUpper},  {"%o", C::Conv::Octal},
      {"%p", C::Conv::Pointer},   {"%c", C::Conv::Char},      {"%s", C::Conv::String},
      {"%b", C::Conv::Binary},    {"%m", C::Conv::Memory},    {"%M", C::Conv::MemoryHex}};
  for (const auto &[fmt, conv] : all) {
    FormatParse p = parseFormat(fmt);
    ASSERT_EQ(p.components.size(), 1u) << fmt;
    EXPECT_EQ(p.components[0].conv, conv) << fmt;
  }
}

TEST(ParserFormatTest, FlagsWidthPrecisionLength) {
  FormatParse p = parseFormat("%-08.3ld");
  ASSERT_EQ(p.error, "");
  const C &c = p.components[0];
  EXPECT_TRUE(c.flagMinus);
  EXPECT_TRUE(c.flagZero);
  EXPECT_EQ(c.width, C::Size::Given);
  EXPECT_EQ(c.widthValue, 8);
  EXPECT_EQ(c.precision, C::Size::Given);
  EXPECT_EQ(c.precisionValue, 3);
  EXPECT_EQ(c.lengthModifiers, 1);
  EXPECT_TRUE(p.beyondStap.empty()); // stap reads `-` then width 08
  p = parseFormat("%#x %+d % d %.s");
  EXPECT_TRUE(p.components[0].flagHash);
  EXPECT_TRUE(p.components[2].flagPlus);
  EXPECT_TRUE(p.components[4].flagSpace);
  // stap (and the runtime) read a bare '.' as no precision.
  EXPECT_EQ(p.components[6].precision, C::Size::None);
  p = parseFormat("%#010x");
  EXPECT_TRUE(p.beyondStap.empty()); // stap reads `#` then width 010
  EXPECT_FALSE(parseFormat("%+-5d").beyondStap.empty());
}

TEST(ParserFormatTest, StarsConsumeArguments) {
  FormatParse p = parseFormat("%*.*s %*d");
  ASSERT_EQ(p.error, "");
  EXPECT_EQ(p.components[0].width, C::Size::Star);
  EXPECT_EQ(p.components[0].precision, C::Size::Star);
  EXPECT_EQ(formatArgumentCount(p.components), 5u);
}

TEST(ParserFormatTest, SupersetOfStapIsAcceptedAndNoted) {
  FormatParse p = parseFormat("%+-5d %lld %-#x");
  ASSERT_EQ(p.error, "");
  EXPECT_EQ(p.beyondStap, (std::vector<std::string>{"%+-5d", "%lld", "%-#x"}));
  EXPECT_EQ(p.components[2].lengthModifiers, 2);
}

TEST(ParserFormatTest, Errors) {
  EXPECT_EQ(parseFormat("%q").error, "invalid or missing conversion specifier");
  EXPECT_EQ(parseFormat("%llld").error, "invalid or missing conversion specifier");
  EXPECT_EQ(parseFormat("%5%").error, "invalid or missing conversion specifier");
  EXPECT_EQ(parseFormat("width %5").error, "trailing incomplete print format conversion");
  EXPECT_EQ(parseFormat("100%").error, "trailing incomplete print format conversion");
  EXPECT_EQ(parseFormat("%-").error, "trailing incomplete print format conversion");
}

} // namespace
} // namespace sonde::parse
