#include "sema/AliasExpander.h"

#include "sema/MarkerResolver.h"
#include "sema/TracepointResolver.h"

#include "ast/Clone.h"
#include "probes/marker/MarkerCatalog.h"

#include <algorithm>
#include <fnmatch.h>

namespace sonde::sema {

using ast::ProbePointComponent;

namespace {

// Each alias of a chain is a level of recursion here and wraps the probe's
// condition once more; far more than any tapset nests.
constexpr size_t kMaxAliasNesting = 1000;

} // namespace

// One piece of a derived body. Alias bodies carry the names the code they wrap
// writes, which is what @probewrite(v) asks about.
struct AliasExpander::Segment {
  const ast::Block *block = nullptr;
  std::shared_ptr<const std::unordered_set<std::string>> useWrites;
};

// The probe being derived at one level of alias expansion (the user's probe at
// the top).
struct AliasExpander::Derivation {
  ast::ProbeDecl *origin = nullptr;
  std::vector<const ast::AliasDecl *> chain; // outermost first
  std::vector<Segment> body;
  bool parentOptional = false; // inside an optional point: failures are quiet
};

// A probe point being matched, with the conditions gathered on the way.
struct AliasExpander::Location {
  std::unique_ptr<ast::ProbePoint> point; // its own condition is unused
  std::vector<const ast::Expr *> conditions;
  const ast::ProbePoint *userPoint = nullptr; // what the user wrote (pn())

  bool optional() const { return point->optional || point->sufficient; }

  Location copy() const {
    Location l;
    l.point = ast::cloneProbePoint(*point);
    l.conditions = conditions;
    l.userPoint = userPoint;
    return l;
  }
};

struct AliasExpander::DeriveError {
  Diagnostic diag;
  bool recursive = false; // never swallowed by wildcards or `?`
  bool tooDeep = false;   // ends the whole derivation: reported once, at the user's point
};

namespace {

// Names of the variables a block assigns, deletes, accumulates into or binds.
class WrittenNames : public ast::RecursiveVisitor {
public:
  using RecursiveVisitor::visit;
  std::unordered_set<std::string> names;

  void visit(ast::AssignExpr &n) override {
    note(n.lhs.get());
    RecursiveVisitor::visit(n);
  }
  void visit(ast::IncDecExpr &n) override {
    note(n.operand.get());
    RecursiveVisitor::visit(n);
  }
  void visit(ast::DeleteStmt &n) override {
    note(n.target.get());
    RecursiveVisitor::visit(n);
  }
  void visit(ast::ForeachStmt &n) override {
    note(n.value.get());
    for (auto &k : n.keys)
      note(k.get());
    RecursiveVisitor::visit(n);
  }
  void visit(ast::TryStmt &n) override {
    note(n.catchVar.get());
    RecursiveVisitor::visit(n);
  }

private:
  void note(const ast::Expr *e) {
    if (auto *s = dynamic_cast<const ast::Symbol *>(e))
      names.insert(s->name);
    else if (auto *a = dynamic_cast<const ast::ArrayIndex *>(e); a && a->base)
      names.insert(a->base->name);
  }
};

class ProbewriteFinder : public ast::RecursiveVisitor {
public:
  using RecursiveVisitor::visit;
  bool found = false;
  void visit(ast::ProbewriteOp &) override { found = true; }
};

bool isGlob(const std::string &s) { return s.find('*') != std::string::npos; }
bool isDoubleGlob(const std::string &s) { return s.find("**") != std::string::npos; }

std::string where(const Token &tok) {
  std::string s = tok.loc.file ? tok.loc.file->name : std::string();
  return s + ":" + std::to_string(tok.loc.line) + ":" + std::to_string(tok.loc.col);
}

} // namespace

AliasExpander::AliasExpander(ast::Script &script, const ProbeMatchTree &tree, SymbolTable &table,
                             SemaDiagnostics &diags, std::string targetCommand)
    : script_(script), tree_(tree), table_(table), diags_(diags),
      targetCommand_(std::move(targetCommand)) {}

AliasExpander::~AliasExpander() = default;

std::vector<ast::DerivedProbe *> AliasExpander::derive(ast::ProbeDecl &probe) {
  size_t first = script_.derived.size();
  if (!probe.body)
    probe.body = std::make_unique<ast::Block>();
  Derivation d;
  d.origin = &probe;
  d.body.push_back({probe.body.get(), nullptr});
  std::vector<Location> locs;
  for (const auto &p : probe.points) {
    Location l;
    l.point = ast::cloneProbePoint(*p);
    l.point->condition.reset();
    if (p->condition)
      l.conditions.push_back(p->condition.get());
    l.userPoint = p.get();
    locs.push_back(std::move(l));
  }
  deriveLocations(d, locs, /*rethrow=*/false); // reports its own errors
  std::vector<ast::DerivedProbe *> out;
  for (size_t i = first; i < script_.derived.size(); ++i)
    out.push_back(script_.derived[i].get());
  return out;
}

// stap's derive_probes: try each location of a probe; a required one that
// yields nothing is an error, a sufficient one that yields something ends the list.
void AliasExpander::deriveLocations(const Derivation &d, std::vector<Location> &locs,
                                    bool rethrow) {
  std::vector<Diagnostic> optionalErrors;
  auto whileResolving = [](const Location &loc, const DeriveError &e) {
    return Diagnostic{DiagKind::SemanticError,
                      "while resolving probe point",
                      loc.point->components.front().tok,
                      false,
                      {e.diag}};
  };
  for (const Location &loc : locs) {
    if (loc.point->components.empty())
      continue;
    try {
      size_t before = script_.derived.size();
      try {
        walk(tree_.root(), loc, 0, d);
      } catch (const DeriveError &e) {
        if (e.recursive || (!loc.optional() && !d.parentOptional))
          throw;
        optionalErrors.push_back(whileResolving(loc, e));
        continue;
      }
      size_t after = script_.derived.size();
      if (!loc.optional() && !d.parentOptional && after == before)
        throw DeriveError{SemaDiagnostics::note("no match")};
      if (loc.point->sufficient && after > before)
        break;
    } catch (const DeriveError &e) {
      if (rethrow || (e.tooDeep && !d.chain.empty()))
        throw;
      diags_.error(whileResolving(loc, e));
      for (auto &o : optionalErrors)
        diags_.error(o);
      optionalErrors.clear();
    }
  }
}

// stap's match_node::find_and_build.
void AliasExpander::walk(const MatchNode &node, const Location &loc, size_t pos,
                         const Derivation &d) {
  const auto &comps = loc.point->components;
  if (node.unsupported) // named at the component that leads into the family
    throw DeriveError{SemaDiagnostics::note("probe point not supported", comps[pos - 1].tok)};
  if (pos == comps.size()) {
    if (node.ends.empty())
      throw DeriveError{SemaDiagnostics::note(
          "probe point truncated (follow: " + node.follow() + ")", comps.back().tok)};
    for (const auto &end : node.ends)
      build(end, loc, d, {});
    return;
  }
  const ProbePointComponent &comp = comps[pos];
  if (isDoubleGlob(comp.name)) {
    walkDoubleGlob(node, loc, pos, d);
    return;
  }
  if (isGlob(comp.name)) {
    walkGlob(node, loc, pos, d);
    return;
  }
  auto it = node.children.find({comp.name, probes::argKindOf(comp)});
  if (it != node.children.end()) {
    walk(*it->second, loc, pos + 1, d);
    return;
  }
  size_t before = script_.derived.size();
  trySuffixExpansion(node, loc, pos, d);
  if (!loc.optional() && script_.derived.size() == before) {
    std::string sugs = node.suggest(comp.name);
    throw DeriveError{SemaDiagnostics::note(
        "probe point mismatch" + (sugs.empty() ? "" : " (similar: " + sugs + ")"), comp.tok)};
  }
}

void AliasExpander::walkGlob(const MatchNode &node, const Location &loc, size_t pos,
                             const Derivation &d) {
  const ProbePointComponent &comp = loc.point->components[pos];
  probes::ArgKind arg = probes::argKindOf(comp);
  size_t before = script_.derived.size();
  for (const auto &[key, child] : node.children) {
    if (key.arg != arg || fnmatch(comp.name.c_str(), key.name.c_str(), FNM_NOESCAPE) != 0)
      continue;
    Location concrete = loc.copy();
    concrete.point->components[pos].name = key.name;
    walkOneMatch(*child, concrete, pos + 1, d);
  }
  finishWildcard(node, loc, pos, d, before);
}

// One of a wildcard's matches: it only needs some of them to work out.
void AliasExpander::walkOneMatch(const MatchNode &node, const Location &loc, size_t pos,
                                 const Derivation &d) {
  try {
    walk(node, loc, pos, d);
  } catch (const DeriveError &e) {
    if (e.recursive)
      throw;
  }
}

// After a wildcard's matches: a suffix of an alias, else (unless optional) the
// mismatch error with the names that were close.
void AliasExpander::finishWildcard(const MatchNode &node, const Location &loc, size_t pos,
                                   const Derivation &d, size_t before) {
  const ProbePointComponent &comp = loc.point->components[pos];
  if (script_.derived.size() == before)
    trySuffixExpansion(node, loc, pos, d);
  if (!loc.optional() && script_.derived.size() == before) {
    std::string sugs = node.suggest(comp.name);
    throw DeriveError{
        SemaDiagnostics::note("probe point mismatch: didn't find any wildcard matches" +
                                  (sugs.empty() ? "" : " (similar: " + sugs + ")"),
                              comp.tok)};
  }
}

// `foo**bar` matches `foo*bar` here, or `foo*` here followed by `**bar` deeper.
void AliasExpander::walkDoubleGlob(const MatchNode &node, const Location &loc, size_t pos,
                                   const Derivation &d) {
  const ProbePointComponent &comp = loc.point->components[pos];
  size_t globStart = comp.name.find("**");
  size_t globEnd = comp.name.find_first_not_of('*', globStart);
  std::string prefix = comp.name.substr(0, globStart);
  std::string suffix = globEnd == std::string::npos ? "" : comp.name.substr(globEnd);
  size_t before = script_.derived.size();

  Location simple = loc.copy();
  simple.point->components[pos].name = prefix + "*" + suffix;
  walkOneMatch(node, simple, pos, d);

  Location expanded = loc.copy();
  auto &cs = expanded.point->components;
  ProbePointComponent pre{comp.tok, prefix + "*", nullptr};
  cs[pos].name = "**" + suffix; // keeps the argument
  cs.insert(cs.begin() + static_cast<long>(pos), std::move(pre));
  walkOneMatch(node, expanded, pos, d);

  finishWildcard(node, loc, pos, d, before);
}

// The components from `pos` on may be a suffix of an alias matched so far
// (`probe myalias.return` tries the alias's points with `.return` appended).
void AliasExpander::trySuffixExpansion(const MatchNode &node, const Location &loc, size_t pos,
                                       const Derivation &d) {
  std::vector<const ProbePointComponent *> suffix;
  for (size_t i = pos; i < loc.point->components.size(); ++i)
    suffix.push_back(&loc.point->components[i]);
  for (const auto &end : node.ends) {
    try {
      build(end, loc, d, suffix);
    } catch (const DeriveError &e) {
      if (e.recursive)
        throw;
      if (!loc.optional())
        throw DeriveError{SemaDiagnostics::note(e.diag.message, loc.point->components[pos].tok)};
    }
  }
}

void AliasExpander::build(const MatchEnd &end, const Location &loc, const Derivation &d,
                          const std::vector<const ProbePointComponent *> &suffix) {
  if (end.alias) {
    expandAlias(*end.alias, loc, d, suffix);
    return;
  }
  if (!suffix.empty())
    throw DeriveError{SemaDiagnostics::note("invalid suffix for probe")};
  if (end.family->validate) {
    std::string err = end.family->validate(*loc.point);
    if (!err.empty())
      throw DeriveError{SemaDiagnostics::note(err)};
  }
  if (end.family->kind == probes::ProbeKind::Marker) {
    emitMarkers(loc, d);
    return;
  }
  if (end.family->kind == probes::ProbeKind::KernelTrace) {
    emitTracepoints(loc, d);
    return;
  }
  const auto *path = dynamic_cast<const ast::StringLit *>(loc.point->components[0].arg.get());
  if (loc.point->components[0].name == "process" && path &&
      probes::marker::MarkerCatalog::isProcessGlob(path->value)) {
    emitProcessGlob(loc, d);
    return;
  }
  emit(loc, d);
}

void AliasExpander::emitProcessGlob(const Location &loc, const Derivation &d) {
  const ast::ProbePointComponent &process = loc.point->components[0];
  const auto &pattern = static_cast<const ast::StringLit &>(*process.arg);
  std::string error;
  std::optional<std::vector<std::string>> files =
      probes::marker::MarkerCatalog::expandProcessGlob(pattern.value, error);
  if (!files)
    throw DeriveError{SemaDiagnostics::note("no match (" + error + ")", pattern.tok)};
  for (const std::string &file : *files) {
    std::unique_ptr<ast::ProbePoint> point = ast::cloneProbePoint(*loc.point);
    static_cast<ast::StringLit &>(*point->components[0].arg).value = file;
    emitConcrete(loc, d, std::move(point));
  }
}

// One derived probe per marker site, each on its own concrete point.
void AliasExpander::emitMarkers(const Location &loc, const Derivation &d) {
  MarkerResolution found = resolveMarkers(*loc.point, targetCommand_);
  if (!found.error.empty())
    throw DeriveError{found.errorAt ? SemaDiagnostics::note(found.error, *found.errorAt)
                                    : SemaDiagnostics::note(found.error)};
  for (ResolvedMarker &m : found.markers)
    emitConcrete(loc, d, std::move(m.point)).markerSite = std::move(m.site);
}

ast::DerivedProbe &AliasExpander::emitConcrete(const Location &loc, const Derivation &d,
                                               std::unique_ptr<ast::ProbePoint> point) {
  Location concrete = loc.copy();
  concrete.point = std::move(point);
  concrete.point->optional = loc.point->optional;
  concrete.point->sufficient = loc.point->sufficient;
  emit(concrete, d);
  return *script_.derived.back();
}

// One derived probe per tracepoint, each on its own concrete point.
void AliasExpander::emitTracepoints(const Location &loc, const Derivation &d) {
  std::string error;
  std::vector<ResolvedTracepointPoint> found = resolveTracepoints(*loc.point, error);
  if (!error.empty())
    throw DeriveError{SemaDiagnostics::note(error)};
  for (ResolvedTracepointPoint &t : found)
    emitConcrete(loc, d, std::move(t.point)).tracepoint = std::move(t.tracepoint);
}

void AliasExpander::expandAlias(const ast::AliasDecl &alias, const Location &loc,
                                const Derivation &d,
                                const std::vector<const ProbePointComponent *> &suffix) {
  // As stap: the expansion that brought us here must not be one already on the
  // chain, which reports the loop at the point that closes it.
  if (!d.chain.empty() && std::count(d.chain.begin(), d.chain.end(), d.chain.back()) > 1)
    throw DeriveError{SemaDiagnostics::note("recursive loop in alias expansion of " +
                                            loc.point->str() + " at " +
                                            where(loc.point->components.front().tok)),
                      true};
  if (d.chain.size() >= kMaxAliasNesting)
    throw DeriveError{SemaDiagnostics::note("too many nested alias expansions (limit " +
                                            std::to_string(kMaxAliasNesting) + ") in " +
                                            loc.point->str() + " at " +
                                            where(loc.point->components.front().tok)),
                      true, true};

  Derivation inner;
  inner.origin = d.origin;
  inner.chain = d.chain;
  inner.chain.push_back(&alias);
  inner.parentOptional = d.parentOptional || loc.optional();

  // What @probewrite in the alias body asks about: the code it wraps.
  std::shared_ptr<const std::unordered_set<std::string>> writes;
  if (usesProbewrite(alias.body.get()) || usesProbewrite(alias.epilogue.get())) {
    WrittenNames w;
    for (const auto &seg : d.body)
      const_cast<ast::Block *>(seg.block)->accept(w);
    writes = std::make_shared<const std::unordered_set<std::string>>(std::move(w.names));
  }
  Segment aliasBody{alias.body.get(), writes};
  if (alias.epilogueStyle) {
    inner.body = d.body;
    if (alias.body)
      inner.body.push_back(aliasBody);
  } else {
    if (alias.body)
      inner.body.push_back(aliasBody);
    inner.body.insert(inner.body.end(), d.body.begin(), d.body.end());
    if (alias.epilogue)
      inner.body.push_back({alias.epilogue.get(), writes});
  }

  std::vector<Location> locs;
  for (const auto &p : alias.points) {
    Location l;
    l.point = ast::cloneProbePoint(*p);
    l.point->condition.reset();
    for (const auto *c : suffix)
      l.point->components.push_back({c->tok, c->name, c->arg ? ast::cloneExpr(*c->arg) : nullptr});
    if (p->condition)
      l.conditions.push_back(p->condition.get());
    l.conditions.insert(l.conditions.end(), loc.conditions.begin(), loc.conditions.end());
    l.userPoint = loc.userPoint;
    locs.push_back(std::move(l));
  }

  size_t before = script_.derived.size();
  deriveLocations(inner, locs, /*rethrow=*/!suffix.empty());
  if (script_.derived.size() > before)
    table_.useFile(alias.file);
}

void AliasExpander::emit(const Location &loc, const Derivation &d) {
  auto dp = std::make_unique<ast::DerivedProbe>();
  dp->point = ast::cloneProbePoint(*loc.point);
  dp->origin = d.origin;
  dp->originPoint = loc.userPoint;
  dp->aliasChain = d.chain;
  dp->body = composeBody(d);
  // c0 && (c1 && ...), the alias's own condition first, as stap's add_condition.
  for (auto it = loc.conditions.rbegin(); it != loc.conditions.rend(); ++it) {
    ast::ExprPtr c = ast::cloneExpr(**it);
    if (!dp->condition) {
      dp->condition = std::move(c);
      continue;
    }
    auto both = std::make_unique<ast::LogicalExpr>();
    both->tok = c->tok;
    both->op = ast::LogicalOp::And;
    both->lhs = std::move(c);
    both->rhs = std::move(dp->condition);
    dp->condition = std::move(both);
  }
  script_.derived.push_back(std::move(dp));
}

std::unique_ptr<ast::Block> AliasExpander::composeBody(const Derivation &d) const {
  auto cloneSegment = [](const Segment &seg) {
    ast::CloneOptions opts;
    if (seg.useWrites)
      opts.replaceProbewrite = [writes = seg.useWrites](const ast::ProbewriteOp &op) {
        auto n = std::make_unique<ast::NumberLit>();
        n->tok = op.tok;
        n->value = op.var && writes->count(op.var->name) ? 1 : 0;
        return ast::ExprPtr(std::move(n));
      };
    return ast::cloneBlock(*seg.block, opts);
  };
  if (d.body.size() == 1)
    return cloneSegment(d.body.front());
  auto block = std::make_unique<ast::Block>();
  block->tok = d.origin->body->tok;
  for (const auto &seg : d.body)
    block->stmts.push_back(cloneSegment(seg));
  return block;
}

bool AliasExpander::usesProbewrite(const ast::Block *b) {
  if (!b)
    return false;
  auto [it, fresh] = probewriteCache_.try_emplace(b, false);
  if (fresh) {
    ProbewriteFinder f;
    const_cast<ast::Block *>(b)->accept(f);
    it->second = f.found;
  }
  return it->second;
}

} // namespace sonde::sema
