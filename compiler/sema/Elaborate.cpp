#include "sema/Elaborate.h"

#include "sema/AliasExpander.h"
#include "sema/ForeachMutation.h"
#include "sema/KernelProbeChecks.h"
#include "sema/ProbeMatchTree.h"
#include "sema/SemaDiagnostics.h"
#include "sema/StatsChecks.h"
#include "sema/SymbolResolver.h"
#include "sema/SymbolTable.h"
#include "sema/TypeInference.h"
#include "sema/UnusedCode.h"

#include "runtime/values/GlobalLayout.h"

#include <deque>

namespace sonde {

namespace {

// An initialized global is a scalar of its initializer's type from the start.
void presetInitializedGlobals(ast::Script &script) {
  for (auto &g : script.globals) {
    if (!g->init)
      continue;
    g->init->type =
        dynamic_cast<ast::StringLit *>(g->init.get()) ? ast::Type::String : ast::Type::Long;
    g->type = g->init->type;
    g->arity = 0;
    g->arityTok = g->tok;
    g->indexTypes.clear();
  }
}

// Derives and resolves probes, then the functions they reach, then the probes
// of tapset files pulled in on the way, until nothing new turns up.
void resolveReachable(ast::Script &script, sema::AliasExpander &expander,
                      sema::SymbolResolver &resolver, sema::SymbolTable &table,
                      const SemaOptions &opts) {
  std::deque<ast::ProbeDecl *> pending;
  for (auto &p : script.probes)
    if (!sema::SymbolTable::isLibrary(p->file))
      pending.push_back(p.get());
  if (opts.unoptimized)
    for (auto &f : script.functions)
      if (!sema::SymbolTable::isLibrary(f->file))
        resolver.resolveFunction(*f);

  for (;;) {
    while (!pending.empty()) {
      ast::ProbeDecl *p = pending.front();
      pending.pop_front();
      for (ast::DerivedProbe *dp : expander.derive(*p))
        resolver.resolveProbe(*dp);
    }
    auto called = resolver.takeNewlyCalled();
    for (ast::FunctionDecl *f : called)
      resolver.resolveFunction(*f);
    auto files = table.takeNewlyUsedFiles();
    for (const SourceFile *file : files)
      for (auto &p : script.probes)
        if (p->file == file)
          pending.push_back(p.get());
    if (called.empty() && files.empty() && pending.empty())
      break;
  }
}

} // namespace

bool elaborate(ast::Script &script, DiagnosticEngine &engine, const SemaOptions &opts) {
  size_t errorsBefore = engine.semanticErrors();
  auto failed = [&] { return engine.semanticErrors() > errorsBefore; };
  sema::SemaDiagnostics diags(engine);

  presetInitializedGlobals(script);
  sema::SymbolTable table(script);
  sema::ProbeMatchTree tree;
  for (const ast::ProbePoint *bad : tree.addAliases(script))
    diags.error("invalid use of wildcard probe point component", bad->tok);

  sema::AliasExpander expander(script, tree, table, diags, opts.targetCommand);
  sema::SymbolResolver resolver(table, diags, opts);
  resolveReachable(script, expander, resolver, table, opts);
  resolver.reportShadowedAliasLocals();
  for (const auto &g : script.globals) {
    if (g->wrap && g->arity == 0)
      diags.error("wrapping not supported for scalars", g->tok);
    // The module's global layout stores names in a bounded field.
    if (g->name.size() > values::kMaxGlobalNameLength)
      diags.error("global name too long (" + std::to_string(g->name.size()) +
                      " characters, at most " + std::to_string(values::kMaxGlobalNameLength) + ")",
                  g->tok);
  }
  // Like stap, later checks only run on a script whose names all resolved.
  if (failed()) {
    resolver.reportLateErrors();
    return false;
  }

  sema::elideUnused(script, resolver.resolvedFunctions(), table, diags, opts);
  if (!opts.unoptimized) {
    sema::warnNeverAssigned(script, diags);
    sema::warnSideEffectFree(script, diags);
  }
  sema::warnUnreachableStatements(script, diags);
  resolver.reportLateErrors();
  if (failed())
    return false;

  sema::inferTypes(script, diags);
  if (failed())
    return false;
  sema::checkForeachMutations(script, diags);
  sema::checkStatsDeclarations(script, diags);
  sema::checkKernelProbes(script, diags);

  if (!failed() && script.derived.empty())
    diags.error("no probes found");
  return !failed();
}

} // namespace sonde
