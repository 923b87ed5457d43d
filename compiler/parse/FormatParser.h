// printf-style format strings -> ast::FormatComponent (language.md 5).
#pragma once

#include "ast/Ast.h"

#include <string>
#include <vector>

namespace sonde::parse {

struct FormatParse {
  std::vector<ast::FormatComponent> components;
  std::string error; // non-empty: the parse error to report
  // Conversions stap would reject but we accept (several flags, `ll`).
  std::vector<std::string> beyondStap;
};

// Splits `format` into literal text and conversions
// `%[flags][width][.precision][l|ll]conv`, where width and precision are digits
// or `*`. `%%` is a Percent component.
FormatParse parseFormat(const std::string &format);

// How many arguments the format consumes (one per conversion, plus one per `*`).
size_t formatArgumentCount(const std::vector<ast::FormatComponent> &components);

} // namespace sonde::parse
