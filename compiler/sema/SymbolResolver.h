// Links every name to its declaration: locals (created on first use), function
// parameters, globals (arity fixed by first use), function calls (overloads by
// arity, priority chains, built-ins), and `$` context variables through the
// probe family. Also the structural checks that need only names: lvalues,
// wildcards, loops, probe conditions, @probewrite/@entry/@defined placement.
#pragma once

#include "ast/Ast.h"
#include "sema/Elaborate.h"
#include "sema/SemaDiagnostics.h"
#include "sema/SymbolTable.h"

#include <set>
#include <unordered_set>
#include <utility>
#include <vector>

namespace sonde::sema {

class SymbolResolver {
public:
  SymbolResolver(SymbolTable &table, SemaDiagnostics &diags, const SemaOptions &opts);

  // Resolves a derived probe's body and its condition.
  void resolveProbe(ast::DerivedProbe &probe);
  // Resolves a function body (once; later calls do nothing).
  void resolveFunction(ast::FunctionDecl &fn);
  // Functions called from code resolved so far that are not resolved yet.
  std::vector<ast::FunctionDecl *> takeNewlyCalled();
  // Every function resolved so far: those reachable from the probes.
  const std::unordered_set<const ast::FunctionDecl *> &resolvedFunctions() const {
    return resolved_;
  }
  // Reports the errors stap only finds after its first optimization pass
  // (bad assignment targets), so they follow the pass-2 warnings.
  void reportLateErrors();
  // Warns, once per global, about the tapset alias locals it took (below).
  void reportShadowedAliasLocals();

private:
  class Visitor;

  SymbolTable &table_;
  SemaDiagnostics &diags_;
  const SemaOptions &opts_;
  std::unordered_set<const ast::FunctionDecl *> resolved_, queued_;
  std::vector<ast::FunctionDecl *> newlyCalled_;
  std::vector<Diagnostic> late_;
  // (global, alias) pairs seen where a user global takes an alias's local,
  // and per global, in the order found, the aliases with where they use it.
  std::set<std::pair<const ast::GlobalDecl *, const ast::AliasDecl *>> shadowsReported_;
  std::vector<std::pair<const ast::GlobalDecl *, std::vector<std::string>>> shadows_;
};

} // namespace sonde::sema
