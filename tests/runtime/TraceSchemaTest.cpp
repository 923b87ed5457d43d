// TraceSchema: field names taken from format text, how arguments travel, and the
// schema text a trace directory keeps (round trip and parse errors).
#include "runtime/session/TraceSchema.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

using namespace sonde::session;

namespace {

using Names = std::vector<std::string>;

// formatFieldNames() of `format`, through the schema that parses it.
Names fieldNames(const std::string &format) {
  std::string error;
  auto schema = TraceSchema::build({{format, ""}}, &error);
  EXPECT_TRUE(schema) << error;
  if (!schema)
    return {};
  EXPECT_EQ(formatFieldNames(schema->type(0)->spec), schema->type(0)->fields);
  return schema->type(0)->fields;
}

TEST(TraceSchema, FieldNamesComeFromTheTextBeforeEachConversion) {
  EXPECT_EQ(fieldNames("pid=%d comm=%s\n"), (Names{"pid", "comm"}));
  EXPECT_EQ(fieldNames("pid: %d, name %s\n"), (Names{"pid", "name"}));
  EXPECT_EQ(fieldNames("(fd\t%d)"), (Names{"fd"}));
  EXPECT_EQ(fieldNames("no args\n"), Names{});
  EXPECT_EQ(fieldNames("100%% of x=%d"), (Names{"x"}));
}

TEST(TraceSchema, FieldNamesWithoutTextAreNumbered) {
  EXPECT_EQ(fieldNames("%s(%d)"), (Names{"arg1", "arg2"}));
  EXPECT_EQ(fieldNames("%d%d"), (Names{"arg1", "arg2"}));
  EXPECT_EQ(fieldNames("x=%d%d -> %s"), (Names{"x", "arg2", "arg3"}));
}

TEST(TraceSchema, DuplicateFieldNamesGetSuffixes) {
  EXPECT_EQ(fieldNames("x=%d x=%d x=%s"), (Names{"x", "x_2", "x_3"}));
  EXPECT_EQ(fieldNames("arg2=%d %d"), (Names{"arg2", "arg2_2"}));
}

TEST(TraceSchema, StarWidthAndPrecisionGetTheirOwnFields) {
  EXPECT_EQ(fieldNames("%*d"), (Names{"arg1_width", "arg1"}));
  EXPECT_EQ(fieldNames("v=%*.*s end=%.*d"),
            (Names{"v_width", "v_precision", "v", "end_precision", "end"}));
  std::string error;
  auto schema = TraceSchema::build({{"v=%*.*s", ""}}, &error);
  ASSERT_TRUE(schema) << error;
  EXPECT_EQ(schema->type(0)->kinds,
            (std::vector<uint8_t>{SONDE_RECORD_ARG_LONG, SONDE_RECORD_ARG_LONG,
                                  SONDE_RECORD_ARG_STRING}));
}

TEST(TraceSchema, FieldNamesNeverStartWithADigit) {
  EXPECT_EQ(fieldNames("9x=%d"), (Names{"x"}));
  EXPECT_EQ(fieldNames("x9=%d"), (Names{"x9"}));
  EXPECT_EQ(fieldNames("123=%d 42 %s"), (Names{"arg1", "arg2"}));
  EXPECT_EQ(fieldNames("1_a=%d"), (Names{"_a"}));
  for (const std::string &name : fieldNames("0=%d 7b=%d 99_=%d"))
    EXPECT_FALSE(name.empty() || (name[0] >= '0' && name[0] <= '9')) << name;
}

TEST(TraceSchema, MemoryFormatsTravelAsText) {
  std::string error;
  auto schema = TraceSchema::build({{"a=%d s=%s\n", "p"}, {"m=%m\n", "q"}}, &error);
  ASSERT_TRUE(schema) << error;
  EXPECT_NE(schema->desc(0), nullptr);
  EXPECT_EQ(schema->desc(1), nullptr);
  EXPECT_EQ(schema->desc(2), nullptr);
  const TraceEventType *text = schema->type(TraceSchema::kTextId);
  ASSERT_NE(text, nullptr);
  EXPECT_EQ(text->fields, Names{"text"});
  EXPECT_EQ(schema->type(2), nullptr);
  EXPECT_EQ(schema->table()[TraceSchema::kTextId].count, 1u);
}

TEST(TraceSchema, BuildRejectsABadFormat) {
  std::string error;
  EXPECT_FALSE(TraceSchema::build({{"ok %d", ""}, {"bad %", ""}}, &error));
  EXPECT_EQ(error.rfind("format #1 \"bad %\": ", 0), 0u) << error;
}

TEST(TraceSchema, SerializeAndParseRoundTrip) {
  const std::vector<TraceSchema::Format> formats{
      {"pid=%d comm=%s\n", "process(\"/a b\").mark(\"x\")"},
      {"tab\there\\n is not a newline\\\n", "src\twith\ttabs\nand\\newlines"},
      {"", ""},
      {"%s(%d) at %d", "\\", 4}};
  std::string error;
  auto schema = TraceSchema::build(formats, &error);
  ASSERT_TRUE(schema) << error;
  std::string text = schema->serialize();
  EXPECT_EQ(text, "sonde-trace-schema 1\n"
                  "format\tprocess(\"/a b\").mark(\"x\")\tpid=%d comm=%s\\n\t0\n"
                  "format\tsrc\\twith\\ttabs\\nand\\\\newlines\t"
                  "tab\\there\\\\n is not a newline\\\\\\n\t0\n"
                  "format\t\t\t0\n"
                  "format\t\\\\\t%s(%d) at %d\t4\n");
  // The third argument is the record's time: it travels as nothing.
  EXPECT_EQ(schema->type(3)->kinds,
            (std::vector<uint8_t>{SONDE_RECORD_ARG_STRING, SONDE_RECORD_ARG_LONG,
                                  SONDE_RECORD_ARG_TIME}));
  auto back = TraceSchema::parse(text, &error);
  ASSERT_TRUE(back) << error;
  ASSERT_EQ(back->formatCount(), formats.size());
  for (uint32_t id = 0; id < formats.size(); ++id) {
    EXPECT_EQ(back->type(id)->format, formats[id].text) << id;
    EXPECT_EQ(back->type(id)->source, formats[id].source) << id;
    EXPECT_EQ(back->type(id)->timeArgs, formats[id].timeArgs) << id;
    EXPECT_EQ(back->type(id)->fields, schema->type(id)->fields) << id;
    EXPECT_EQ(back->type(id)->kinds, schema->type(id)->kinds) << id;
  }
  EXPECT_EQ(back->serialize(), text);
  // No formats, and no final newline.
  auto empty = TraceSchema::parse("sonde-trace-schema 1", &error);
  ASSERT_TRUE(empty) << error;
  EXPECT_EQ(empty->formatCount(), 0u);
}

std::string parseError(std::string_view text) {
  std::string error;
  EXPECT_FALSE(TraceSchema::parse(text, &error)) << text;
  return error;
}

TEST(TraceSchema, ParseErrorsNameTheLine) {
  EXPECT_EQ(parseError(""), "empty schema");
  EXPECT_EQ(parseError("sonde-trace-schema 2\n"), "line 1: expected \"sonde-trace-schema 1\"");
  const std::string header = "sonde-trace-schema 1\n";
  const std::string badLine = "expected \"format<TAB>source<TAB>text<TAB>time-arguments\"";
  EXPECT_EQ(parseError(header + "format\ta\tb\t0\nformat a b\n"), "line 3: " + badLine);
  EXPECT_EQ(parseError(header + "format\ta\n"), "line 2: " + badLine);
  EXPECT_EQ(parseError(header + "format\ta\tb\n"), "line 2: " + badLine);
  EXPECT_EQ(parseError(header + "format\ta\tb\t0\tc\n"), "line 2: " + badLine);
  EXPECT_EQ(parseError(header + "formats\ta\tb\t0\n"), "line 2: " + badLine);
  EXPECT_EQ(parseError(header + "\n"), "line 2: " + badLine);
  EXPECT_EQ(parseError(header + "format\ta\\x\tb\t0\n"), "line 2: bad escape sequence");
  EXPECT_EQ(parseError(header + "format\ta\tb\\\t0\n"), "line 2: bad escape sequence");
  EXPECT_EQ(parseError(header + "format\ta\tb\tzz\n"), "line 2: bad time-arguments mask 'zz'");
  EXPECT_NE(parseError(header + "format\ta\tbad %\t0\n").find("format #0 \"bad %\": "),
            std::string::npos);
}

} // namespace
