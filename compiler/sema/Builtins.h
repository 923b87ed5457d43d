// The built-in (tapset) functions of language.md §6 as data: one row per
// signature. Only signatures live here; their code is generated later.
#pragma once

#include "ast/Ast.h"

#include <string>
#include <string_view>
#include <vector>

namespace sonde::sema {

// Where a function means something (language.md §6 scope column).
enum class BuiltinScope : uint8_t { User, Kernel, Anywhere };

struct BuiltinFunction {
  std::string_view name;
  BuiltinScope scope;
  char returns;            // 'L' long, 'S' string, 'V' no value
  std::string_view params; // one letter per parameter: 'L' or 'S'
  unsigned minArgs;        // parameters past this many are optional

  size_t maxArgs() const { return params.size(); }
  ast::Type returnType() const;
  ast::Type paramType(size_t i) const;
};

// The row for `name` called with `arity` arguments, or null.
const BuiltinFunction *findBuiltin(std::string_view name, size_t arity);
// Any row named `name` (for arity-mismatch messages), or null; the one taking the
// most arguments when there are several.
const BuiltinFunction *findBuiltinByName(std::string_view name);
// Every built-in name once, for "did you mean" hints.
const std::vector<std::string> &builtinNames();

} // namespace sonde::sema
