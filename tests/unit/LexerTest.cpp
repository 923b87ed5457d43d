// The lexer (grammar/Sonde.g4 lexer rules + parse/Lexer.cpp) and literal
// conversion (parse/Literals.cpp).
#include "parse/Lexer.h"
#include "parse/Literals.h"

#include "SondeLexer.h"

#include <gtest/gtest.h>

namespace sonde::parse {
namespace {

using L = sonde_antlr::SondeLexer;

struct Lexed {
  std::unique_ptr<SourceFile> file;
  std::vector<LexToken> tokens;
};

Lexed lex(const std::string &text) {
  Lexed l;
  l.file = std::make_unique<SourceFile>("t.probe", text);
  l.tokens = lexFile(*l.file);
  return l;
}

// Token texts, space separated, without the final EOF.
std::string texts(const std::string &text) {
  Lexed l = lex(text);
  std::string out;
  for (size_t i = 0; i + 1 < l.tokens.size(); ++i)
    out += (i ? " " : "") + l.tokens[i].text;
  return out;
}

std::vector<size_t> types(const std::string &text) {
  Lexed l = lex(text);
  std::vector<size_t> out;
  for (size_t i = 0; i + 1 < l.tokens.size(); ++i)
    out.push_back(l.tokens[i].type);
  return out;
}

TEST(LexerTest, EndsWithEofAndSkipsCommentsAndWhitespace) {
  EXPECT_EQ(texts("a # shell\nb // c++\nc /* c\n */ d \t\f\v\r\n e"), "a b c d e");
  Lexed l = lex("");
  ASSERT_EQ(l.tokens.size(), 1u);
  EXPECT_EQ(l.tokens[0].type, antlr4::Token::EOF);
}

TEST(LexerTest, UnterminatedBlockCommentRunsToEndOfFile) {
  EXPECT_EQ(texts("a /* never closed\n b c"), "a");
}

TEST(LexerTest, DollarHashAndAtHashAreTokensNotComments) {
  EXPECT_EQ(types("$# @# #x"), (std::vector<size_t>{L::ARGCOUNT_RAW, L::ARGCOUNT_STR}));
}

TEST(LexerTest, IdentifiersTargetsAndAtWords) {
  EXPECT_EQ(types("foo _x1 f$o $arg1 $$vars $foo$ $ $$ @count @define @foo @1"),
            (std::vector<size_t>{L::IDENTIFIER, L::IDENTIFIER, L::IDENTIFIER, L::TARGET, L::TARGET,
                                 L::TARGET, L::DOLLARS, L::DOLLARS, L::AT_COUNT, L::ATWORD,
                                 L::ATWORD, L::ATWORD}));
  EXPECT_EQ(texts("$foo$$->bar"), "$foo$$ -> bar");
}

TEST(LexerTest, KeywordsAndPrintNamesAreTheirOwnTokens) {
  EXPECT_EQ(types("probe private string long printf print_char printer"),
            (std::vector<size_t>{L::PROBE, L::PRIVATE, L::STRING_KW, L::LONG, L::PRINTF,
                                 L::PRINT_CHAR, L::IDENTIFIER}));
  EXPECT_TRUE(isKeyword(L::CATCH));
  EXPECT_FALSE(isKeyword(L::PRINTF));
}

TEST(LexerTest, NumbersGreedilyEatAlphanumerics) {
  EXPECT_EQ(texts("12ab 0x1F 017 9+1"), "12ab 0x1F 017 9 + 1");
  EXPECT_EQ(types("12ab"), (std::vector<size_t>{L::NUMBER}));
}

TEST(LexerTest, OperatorsTakeTheLongestMatch) {
  EXPECT_EQ(texts("a<<<b>>>c<<=d>>=e"), "a <<< b >>> c <<= d >>= e");
  EXPECT_EQ(texts("==!=<=>==~!~+=-=*=/=%=&=^=|=.=&&||++--->"),
            "== != <= >= =~ !~ += -= *= /= %= &= ^= |= .= && || ++ -- ->");
  EXPECT_EQ(texts("%( %? %: %) % ("), "%( %? %: %) % (");
  // There is no >>>= and no **.
  EXPECT_EQ(texts(">>>= **"), ">>> = * *");
  // The documented trap: `v-=k` is v -= k.
  EXPECT_EQ(texts("foreach (v-=k in a)"), "foreach ( v -= k in a )");
}

TEST(LexerTest, EmbeddedCodeIsOneToken) {
  Lexed l = lex("%{ int x; %} y");
  ASSERT_EQ(l.tokens.size(), 3u);
  EXPECT_EQ(l.tokens[0].type, L::EMBEDDED);
  EXPECT_EQ(l.tokens[0].text, "%{ int x; %}");
  EXPECT_FALSE(l.tokens[0].error);
}

TEST(LexerTest, UnterminatedEmbeddedCodeIsAnErrorToken) {
  Lexed l = lex("x %{ int x;");
  ASSERT_TRUE(l.tokens[1].error);
  EXPECT_EQ(l.tokens[1].error->message,
            "Could not find matching '%}' to close embedded function block");
}

TEST(LexerTest, StringsMustCloseOnTheSameLine) {
  Lexed l = lex("x = \"abc\ny\"");
  ASSERT_TRUE(l.tokens[2].error);
  EXPECT_EQ(l.tokens[2].error->message, "Could not find matching closing quote");
  EXPECT_EQ(l.tokens[2].loc.line, 1u);
  EXPECT_EQ(l.tokens[2].loc.col, 5u);
  EXPECT_FALSE(lex("\"a\\\"b\"").tokens[0].error); // escaped quote inside
  EXPECT_TRUE(lex("\"ab\\\"").tokens[0].error);    // the last quote is escaped
}

TEST(LexerTest, LocationsAreOneBasedByteColumns) {
  Lexed l = lex("probe begin {\n\tx = \"\xc3\xa9\" y\n}");
  // "y" follows a two-byte character: its column counts bytes.
  const LexToken &y = l.tokens[6];
  EXPECT_EQ(y.text, "y");
  EXPECT_EQ(y.loc.line, 2u);
  EXPECT_EQ(y.loc.col, 11u);
  EXPECT_EQ(l.tokens[5].text, "\"\xc3\xa9\"");
}

TEST(LexerTest, StrayBytesBecomeErrorTokens) {
  Lexed l = lex("a \x01 b");
  ASSERT_TRUE(l.tokens[1].error);
  EXPECT_EQ(l.tokens[1].error->message, "unknown junk token");
  // Punctuation stap does not use is an operator token the parser rejects.
  EXPECT_FALSE(lex("a ` b").tokens[1].error);
}

TEST(LexerTest, DiagnosticTokenKinds) {
  Lexed l = lex("probe x 1 \"a\\tb\" + $y %{ %}");
  EXPECT_EQ(diagToken(l.tokens[0]).kind, TokenKind::Keyword);
  EXPECT_EQ(diagToken(l.tokens[1]).kind, TokenKind::Identifier);
  EXPECT_EQ(diagToken(l.tokens[2]).kind, TokenKind::Number);
  Token s = diagToken(l.tokens[3]);
  EXPECT_EQ(s.kind, TokenKind::String);
  EXPECT_EQ(s.text, "a\tb"); // decoded, without quotes
  EXPECT_EQ(diagToken(l.tokens[4]).kind, TokenKind::Operator);
  EXPECT_EQ(diagToken(l.tokens[5]).kind, TokenKind::Identifier);
  EXPECT_EQ(diagToken(l.tokens[6]).kind, TokenKind::EmbeddedCode);
  EXPECT_EQ(diagToken(l.tokens[7]).kind, TokenKind::EndOfFile);
}

TEST(LexerTest, AdjacencyOffsets) {
  Lexed l = lex("sys_* foo *");
  EXPECT_EQ(l.tokens[0].end, l.tokens[1].begin); // sys_ and * touch
  EXPECT_NE(l.tokens[2].end, l.tokens[3].begin); // foo and * do not
}

// ------------------------------------------------------------ literals

TEST(LexerTest, NumbersConvertLikeStrtoull) {
  EXPECT_EQ(parseNumber("0"), 0);
  EXPECT_EQ(parseNumber("42"), 42);
  EXPECT_EQ(parseNumber("0x1f"), 31);
  EXPECT_EQ(parseNumber("0X1F"), 31);
  EXPECT_EQ(parseNumber("017"), 15);
  EXPECT_EQ(parseNumber("18446744073709551615"), -1); // wraps to int64
  EXPECT_EQ(parseNumber("9223372036854775808", true), INT64_MIN);
  EXPECT_EQ(parseNumber("9223372036854775809", true), std::nullopt);
  EXPECT_EQ(parseNumber("18446744073709551616"), std::nullopt);
  EXPECT_EQ(parseNumber("12ab"), std::nullopt);
  EXPECT_EQ(parseNumber("09"), std::nullopt);
  EXPECT_EQ(parseNumber("1L"), std::nullopt);
  EXPECT_EQ(parseNumber("0b101"), std::nullopt);
}

TEST(LexerTest, StringEscapes) {
  EXPECT_EQ(decodeString("\"a\\n\\t\\r\\a\\b\\f\\v\\\\\\\"\\'\""), "a\n\t\r\a\b\f\v\\\"'");
  EXPECT_EQ(decodeString("\"\\101\\60\\0x\""), std::string("A0\0x", 4));
  EXPECT_EQ(decodeString("\"\\1012\""), "A2"); // at most three octal digits
  EXPECT_EQ(decodeString("\"\\x41\\x4a\\x7\""), "AJ\x07");
  EXPECT_EQ(decodeString("\"\\q\\z\""), "qz"); // unknown escape yields the char
  EXPECT_TRUE(isTerminatedString("\"abc\""));
  EXPECT_FALSE(isTerminatedString("\"abc"));
  EXPECT_FALSE(isTerminatedString("\""));
}

} // namespace
} // namespace sonde::parse
