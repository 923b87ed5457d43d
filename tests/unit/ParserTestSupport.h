// Helpers for the parser unit tests: parse a string, and dump the AST as
// s-expressions so a test can assert the exact tree shape.
#pragma once

#include "ast/Ast.h"
#include "parse/Parser.h"

#include <memory>
#include <string>

namespace sonde::test {

struct ParseResult {
  std::unique_ptr<SourceFile> file;
  ast::Script script;
  bool ok = false;
  std::string diagnostics; // rendered as the driver prints them
};

ParseResult parseText(const std::string &text, const ParseOptions &opts = {},
                      const std::string &fileName = "input.probe");

// The whole script, one declaration per line, e.g.
//   (probe (begin) (block (expr (= x (+ 1 2)))))
std::string dumpScript(const ast::Script &script);
// One expression or statement.
std::string dump(ast::Node &node);

// Parses `probe begin { <stmt> }` and returns the dump of that one statement
// (or the diagnostics if parsing failed).
std::string dumpStatement(const std::string &stmt);
// Same for an expression statement, without the (expr ...) wrapper.
std::string dumpExpr(const std::string &expr);

} // namespace sonde::test
