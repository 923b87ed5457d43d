// Script-wide names: globals and functions of the user's files and of the
// tapset library, with file-scoped `private` ones, and which library files the
// script has pulled in by referring to their declarations.
#pragma once

#include "ast/Ast.h"

#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace sonde::sema {

class SymbolTable {
public:
  explicit SymbolTable(ast::Script &script);

  // The global `name` as seen from code in `from`: a private global of that
  // file, else a user global, else a library global (which pulls its file in).
  ast::GlobalDecl *findGlobal(const std::string &name, const SourceFile *from);

  // Every function called `name` visible from `from`, in declaration order.
  std::vector<ast::FunctionDecl *> functionsNamed(const std::string &name,
                                                  const SourceFile *from) const;
  // The same-arity overloads of a call, in the order the runtime chain tries them
  // (priority, then declaration order). Pulls in the library files they live in.
  std::vector<ast::FunctionDecl *> resolveCall(const std::string &name, size_t arity,
                                               const SourceFile *from);
  // Function names visible from `from`, for "did you mean" hints.
  std::vector<std::string> functionNames(const SourceFile *from) const;

  // Library files are pulled in when one of their globals, functions or aliases
  // is used; their probes then become part of the script.
  void useFile(const SourceFile *file);
  bool isUsed(const SourceFile *file) const;
  // Library files pulled in since the last call.
  std::vector<const SourceFile *> takeNewlyUsedFiles();

  static bool isLibrary(const SourceFile *f) { return f && f->isLibrary; }

private:
  struct FileName {
    const SourceFile *file;
    std::string name;
    bool operator==(const FileName &o) const { return file == o.file && name == o.name; }
  };
  struct FileNameHash {
    size_t operator()(const FileName &k) const {
      return std::hash<std::string>()(k.name) ^ std::hash<const void *>()(k.file);
    }
  };

  std::unordered_map<std::string, ast::GlobalDecl *> userGlobals_, libraryGlobals_;
  std::unordered_map<FileName, ast::GlobalDecl *, FileNameHash> privateGlobals_;
  // Declaration order is the order of Script::functions.
  std::unordered_map<std::string, std::vector<ast::FunctionDecl *>> functions_;
  std::unordered_set<const SourceFile *> used_;
  std::vector<const SourceFile *> newlyUsed_;
};

} // namespace sonde::sema
