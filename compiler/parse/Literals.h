// Conversion of literal token text: numbers (strtoull rules) and C-escaped strings.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace sonde::parse {

// A number token (`123`, `0x1f`, `017`) as C's strtoull(text, 0) reads it, with
// stap's range rule: up to 2^64-1 (wrapping to int64), or 2^63 when negated.
// nullopt for junk such as `12ab` or `09` ("number invalid or out of range").
std::optional<int64_t> parseNumber(std::string_view text, bool negated = false);

// True if a STRING token's raw text ends with an unescaped closing quote.
bool isTerminatedString(std::string_view raw);

// The value of a STRING token's raw text (quotes included): C escapes decoded,
// octal \o..\ooo and hex \xHH; an unknown escape \q yields q.
std::string decodeString(std::string_view raw);

} // namespace sonde::parse
