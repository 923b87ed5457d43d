#include "sema/SymbolTable.h"

#include <algorithm>
#include <tuple>

namespace sonde::sema {

SymbolTable::SymbolTable(ast::Script &script) {
  for (auto &g : script.globals) {
    if (g->isPrivate)
      privateGlobals_.emplace(FileName{g->file, g->name}, g.get());
    else if (isLibrary(g->file))
      libraryGlobals_.emplace(g->name, g.get());
    else
      userGlobals_.emplace(g->name, g.get());
  }
  for (auto &f : script.functions)
    functions_[f->name].push_back(f.get());
}

ast::GlobalDecl *SymbolTable::findGlobal(const std::string &name, const SourceFile *from) {
  if (auto it = privateGlobals_.find(FileName{from, name}); it != privateGlobals_.end())
    return it->second;
  if (auto it = userGlobals_.find(name); it != userGlobals_.end())
    return it->second;
  if (auto it = libraryGlobals_.find(name); it != libraryGlobals_.end()) {
    useFile(it->second->file);
    return it->second;
  }
  return nullptr;
}

std::vector<ast::FunctionDecl *> SymbolTable::functionsNamed(const std::string &name,
                                                             const SourceFile *from) const {
  std::vector<ast::FunctionDecl *> out;
  auto it = functions_.find(name);
  if (it == functions_.end())
    return out;
  for (auto *f : it->second)
    if (!f->isPrivate || f->file == from)
      out.push_back(f);
  return out;
}

std::vector<ast::FunctionDecl *> SymbolTable::resolveCall(const std::string &name, size_t arity,
                                                          const SourceFile *from) {
  // Lower priority runs first: explicit `:N`, else 0 for user functions and 1
  // for library ones; ties keep declaration order.
  std::vector<std::tuple<int64_t, size_t, ast::FunctionDecl *>> ranked;
  for (auto *f : functionsNamed(name, from))
    if (f->params.size() == arity)
      ranked.emplace_back(f->priority ? *f->priority : (isLibrary(f->file) ? 1 : 0), ranked.size(),
                          f);
  std::sort(ranked.begin(), ranked.end());
  std::vector<ast::FunctionDecl *> chain;
  for (auto &[prio, order, f] : ranked) {
    useFile(f->file);
    chain.push_back(f);
  }
  return chain;
}

std::vector<std::string> SymbolTable::functionNames(const SourceFile *from) const {
  std::vector<std::string> names;
  for (const auto &[name, decls] : functions_)
    if (std::any_of(decls.begin(), decls.end(),
                    [&](const ast::FunctionDecl *f) { return !f->isPrivate || f->file == from; }))
      names.push_back(name);
  std::sort(names.begin(), names.end());
  return names;
}

void SymbolTable::useFile(const SourceFile *file) {
  if (!isLibrary(file))
    return;
  if (used_.insert(file).second)
    newlyUsed_.push_back(file);
}

bool SymbolTable::isUsed(const SourceFile *file) const {
  return !isLibrary(file) || used_.count(file) > 0;
}

std::vector<const SourceFile *> SymbolTable::takeNewlyUsedFiles() {
  std::vector<const SourceFile *> out;
  out.swap(newlyUsed_);
  return out;
}

} // namespace sonde::sema
