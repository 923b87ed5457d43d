// The shared printf format parser (runtime/format/FormatParse.cpp).
#include "runtime/format/FormatParser.h"

#include <gtest/gtest.h>

#include <string>

using sonde::format::beyondStap;
using sonde::format::itemText;
using sonde::format::ParsedFormat;
using sonde::format::parseFormat;

namespace {

// The items as "text" pieces, for compact expectations.
std::string pieces(std::string_view fmt, const ParsedFormat &p) {
  std::string out;
  for (const SondeFormatItem &item : p.items) {
    if (!out.empty())
      out += '|';
    out += itemText(fmt, item);
  }
  return out;
}

TEST(FormatParse, SplitsLiteralsPercentAndConversions) {
  const std::string fmt = "a=%d, %%b=%-08x\n";
  ParsedFormat p = parseFormat(fmt);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(pieces(fmt, p), "a=|%d|, |%%|b=|%-08x|\n");
  EXPECT_EQ(p.items[1].conv, SONDE_CONV_SIGNED_DEC);
  EXPECT_EQ(p.items[3].conv, SONDE_CONV_PERCENT);
  const SondeFormatItem &x = p.items[5];
  EXPECT_EQ(x.conv, SONDE_CONV_HEX_LOWER);
  EXPECT_EQ(x.flags, SONDE_FMT_LEFT | SONDE_FMT_ZERO);
  EXPECT_EQ(x.width_kind, SONDE_SIZE_GIVEN);
  EXPECT_EQ(x.width, 8);
  EXPECT_EQ(x.precision_kind, SONDE_SIZE_NONE);
  EXPECT_EQ(p.argCount(), 2u);
}

TEST(FormatParse, EveryConversion) {
  const std::string fmt = "%d%i%u%x%X%o%p%c%s%b%m%M";
  ParsedFormat p = parseFormat(fmt);
  ASSERT_TRUE(p.ok());
  const uint8_t expected[] = {SONDE_CONV_SIGNED_DEC, SONDE_CONV_SIGNED_DEC, SONDE_CONV_UNSIGNED_DEC,
                              SONDE_CONV_HEX_LOWER,  SONDE_CONV_HEX_UPPER,  SONDE_CONV_OCTAL,
                              SONDE_CONV_POINTER,    SONDE_CONV_CHAR,       SONDE_CONV_STRING,
                              SONDE_CONV_BINARY,     SONDE_CONV_MEMORY,     SONDE_CONV_MEMORY_HEX};
  ASSERT_EQ(p.items.size(), std::size(expected));
  for (size_t k = 0; k < p.items.size(); ++k)
    EXPECT_EQ(p.items[k].conv, expected[k]) << k;
}

TEST(FormatParse, StarsConsumeArguments) {
  const std::string fmt = "%*d %.*s %*.*x %5.3d";
  ParsedFormat p = parseFormat(fmt);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p.items[0].width_kind, SONDE_SIZE_STAR);
  EXPECT_EQ(p.items[2].precision_kind, SONDE_SIZE_STAR);
  EXPECT_EQ(p.items[4].width_kind, SONDE_SIZE_STAR);
  EXPECT_EQ(p.items[4].precision_kind, SONDE_SIZE_STAR);
  EXPECT_EQ(p.items[6].width, 5);
  EXPECT_EQ(p.items[6].precision, 3);
  EXPECT_EQ(p.argCount(), 2u + 2u + 3u + 1u);
}

TEST(FormatParse, BareDotMeansNoPrecisionAsInStap) {
  ParsedFormat p = parseFormat("%.d");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p.items[0].precision_kind, SONDE_SIZE_NONE);
}

TEST(FormatParse, HugeWidthSaturates) {
  ParsedFormat p = parseFormat("%99999999999999999999d");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p.items[0].width, INT32_MAX);
}

TEST(FormatParse, AcceptsFlagCombinationsAndLongModifiersBeyondStap) {
  const std::string fmt = "%-+5d %ld %lld %-#x %05d";
  ParsedFormat p = parseFormat(fmt);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p.items[0].flags, SONDE_FMT_LEFT | SONDE_FMT_PLUS);
  EXPECT_TRUE(beyondStap(p.items[0]));  // two flags
  EXPECT_FALSE(beyondStap(p.items[2])); // one 'l' is stap's
  EXPECT_EQ(p.items[2].length_mods, 1);
  EXPECT_TRUE(beyondStap(p.items[4])); // "ll"
  EXPECT_TRUE(beyondStap(p.items[6]));
  EXPECT_FALSE(beyondStap(p.items[8])); // "%05d" is one flag and a width
}

TEST(FormatParse, RejectsWhatStapRejects) {
  struct Case {
    const char *fmt;
    SondeFormatParseStatus status;
    size_t offset;
  };
  const Case cases[] = {
      {"abc%5", SONDE_FORMAT_INCOMPLETE, 3},      {"%", SONDE_FORMAT_INCOMPLETE, 0},
      {"x %-", SONDE_FORMAT_INCOMPLETE, 2},       {"%ll", SONDE_FORMAT_INCOMPLETE, 0},
      {"%q", SONDE_FORMAT_BAD_CONVERSION, 0},     {"a %5.2f", SONDE_FORMAT_BAD_CONVERSION, 2},
      {"%n", SONDE_FORMAT_BAD_CONVERSION, 0},     {"%llld", SONDE_FORMAT_BAD_CONVERSION, 0},
      {"%d %hd", SONDE_FORMAT_BAD_CONVERSION, 3},
  };
  for (const Case &c : cases) {
    ParsedFormat p = parseFormat(c.fmt);
    EXPECT_EQ(p.status, c.status) << c.fmt;
    EXPECT_EQ(p.errorOffset, c.offset) << c.fmt;
  }
  EXPECT_STREQ(parseFormat("%5").error(), "trailing incomplete print format conversion");
  EXPECT_STREQ(parseFormat("%y").error(), "invalid or missing conversion specifier");
  EXPECT_STREQ(parseFormat("%d").error(), "");
}

TEST(FormatParse, SizingCallReportsTheItemCount) {
  const char *fmt = "a%db%sc";
  size_t count = 0;
  EXPECT_EQ(sonde_format_parse(fmt, 7, nullptr, 0, &count, nullptr), SONDE_FORMAT_PARSED);
  EXPECT_EQ(count, 5u);
  SondeFormatItem items[2];
  EXPECT_EQ(sonde_format_parse(fmt, 7, items, 2, &count, nullptr), SONDE_FORMAT_PARSED);
  EXPECT_EQ(count, 5u);
  EXPECT_EQ(items[1].conv, SONDE_CONV_SIGNED_DEC);
}

TEST(FormatParse, EmptyFormatHasNoItems) {
  ParsedFormat p = parseFormat("");
  EXPECT_TRUE(p.ok());
  EXPECT_TRUE(p.items.empty());
  EXPECT_EQ(p.argCount(), 0u);
}

} // namespace
