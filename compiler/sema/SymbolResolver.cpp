#include "sema/SymbolResolver.h"

#include "probes/ProbeFamilies.h"
#include "sema/Builtins.h"

#include <algorithm>
#include <optional>
#include <unordered_map>

namespace sonde::sema {

namespace {

constexpr size_t kMaxArrayIndexes = 9;

const SourceFile *fileOf(const ast::Node &n) { return n.tok.loc.file; }

} // namespace

// Resolves one body: a derived probe's, a function's, or a probe condition
// (which has no locals of its own).
class SymbolResolver::Visitor : public ast::RecursiveVisitor {
public:
  using RecursiveVisitor::visit;
  Visitor(SymbolResolver &r, std::vector<std::unique_ptr<ast::LocalVar>> *locals,
          ast::FunctionDecl *fn, const probes::ProbeFamily *family, const ast::ProbePoint *point)
      : r_(r), locals_(locals), fn_(fn), family_(family), point_(point) {
    if (locals_)
      for (auto &l : *locals_)
        byName_.emplace(l->name, l.get());
  }

  bool modifies = false; // a condition that writes something is an error
  void setResolved(const ast::DerivedProbe &probe) {
    resolved_ = {probe.markerSite.get(), probe.tracepoint.get()};
    aliasChain_ = &probe.aliasChain;
  }

  void visit(ast::Symbol &s) override { resolveScalar(s, true, false); }

  void visit(ast::ArrayIndex &a) override { resolveIndex(a, /*wildcardOk=*/false, true, false); }

  void visit(ast::InExpr &n) override {
    for (auto &k : n.keys)
      walk(k); // `*` allowed
    if (n.base)
      resolveArray(*n.base, n.keys.size(), n.base->tok, true, false);
    walk(n.hist);
  }

  void visit(ast::FunctionCall &c) override {
    if (!locals_) {
      r_.diags_.error("probe condition must not reference function", c.tok);
      return;
    }
    for (auto &a : c.args)
      walk(a);
    resolveCall(c);
  }

  // `x += 1` and `x++` read x only when their value is used: as a statement
  // they are pure writes, and stap displays such a global at exit.
  void visit(ast::AssignExpr &n) override {
    if (!locals_)
      modifies = true;
    bool alsoRead =
        n.op != ast::AssignOp::Assign && n.op != ast::AssignOp::Accumulate && &n != discarded_;
    resolveLvalue(*n.lhs, alsoRead, n.tok, /*assignment=*/true);
    walk(n.rhs);
  }

  void visit(ast::IncDecExpr &n) override {
    if (!locals_)
      modifies = true;
    resolveLvalue(*n.operand, &n != discarded_, n.tok, /*assignment=*/false);
  }

  void visit(ast::ExprStmt &n) override { walkDiscarded(n.expr); }

  void visit(ast::TargetSymbol &t) override {
    walkComponents(t.components);
    resolveTarget(t);
  }

  void visit(ast::CastOp &n) override {
    walk(n.operand);
    walkComponents(n.components);
    // Needs DWARF/BTF type information, which pass 2 does not read yet.
    if (definedDepth_ == 0)
      r_.diags_.error("type definition '" + n.typeName + "' not found in '" + n.module + "'",
                      n.tok);
  }

  void visit(ast::AtVar &n) override {
    walkComponents(n.components);
    if (definedDepth_ == 0)
      r_.diags_.error("unresolved @var() expression", n.tok);
  }

  void visit(ast::DefinedOp &n) override {
    ++definedDepth_;
    walk(n.operand);
    --definedDepth_;
  }

  // stap folds @defined in pass 2 and drops the branch it rules out, so
  // `@defined($arg9) ? $arg9 : 0` is fine at a marker with fewer arguments.
  void visit(ast::TernaryExpr &n) override {
    std::optional<bool> known = staticCondition(*n.cond);
    bool discarded = &n == discarded_;
    walk(n.cond);
    if (discarded)
      discarded_ = n.thenExpr.get();
    walkBranch(n.thenExpr, known && !*known);
    if (discarded)
      discarded_ = n.elseExpr.get();
    walkBranch(n.elseExpr, known && *known);
  }

  void visit(ast::IfStmt &n) override {
    std::optional<bool> known = staticCondition(*n.cond);
    walk(n.cond);
    walkBranch(n.thenStmt, known && !*known);
    walkBranch(n.elseStmt, known && *known);
  }

  void visit(ast::ProbewriteOp &n) override {
    // Alias expansion replaced every @probewrite of an alias body already.
    r_.diags_.error("unexpected @probewrite", n.tok);
  }

  void visit(ast::WhileStmt &n) override {
    walk(n.cond);
    inLoop([&] { walk(n.body); });
  }

  void visit(ast::ForStmt &n) override {
    walkDiscarded(n.init);
    walk(n.cond);
    walkDiscarded(n.incr);
    inLoop([&] { walk(n.body); });
  }

  void visit(ast::ForeachStmt &n) override {
    for (auto &k : n.keys)
      resolveScalar(*k, false, true);
    for (auto &s : n.slice)
      walk(s);
    if (n.base) {
      resolveArray(*n.base, n.keys.size(), n.base->tok, true, false);
      if (!n.slice.empty() && n.slice.size() != n.keys.size())
        r_.diags_.error(unresolvedArray(n.slice.size(), n.base->name), n.base->tok);
    }
    walk(n.hist);
    if (n.value)
      resolveScalar(*n.value, false, true);
    walk(n.limit);
    inLoop([&] { walk(n.body); });
  }

  void visit(ast::TryStmt &n) override {
    walk(n.tryBlock);
    if (n.catchVar)
      resolveScalar(*n.catchVar, false, true);
    walk(n.catchBlock);
  }

  void visit(ast::ReturnStmt &n) override {
    if (!fn_)
      r_.diags_.error("found 'return' not in function context", n.tok);
    walk(n.value);
  }

  void visit(ast::BreakStmt &n) override {
    if (loopDepth_ == 0)
      r_.diags_.error("cannot 'break' outside loop", n.tok);
  }

  void visit(ast::ContinueStmt &n) override {
    if (loopDepth_ == 0)
      r_.diags_.error("cannot 'continue' outside loop", n.tok);
  }

  void visit(ast::DeleteStmt &n) override {
    ast::Expr *t = n.target.get();
    if (!t)
      return;
    if (auto *s = dynamic_cast<ast::Symbol *>(t)) {
      resolveDeleted(*s);
    } else if (auto *a = dynamic_cast<ast::ArrayIndex *>(t)) {
      if (a->hist)
        r_.diags_.error("cannot delete histogram bucket entries", a->tok);
      resolveIndex(*a, /*wildcardOk=*/true, true, true);
    } else {
      r_.diags_.error("Expecting symbol or array index expression", t->tok);
      walk(n.target);
    }
  }

private:
  // Walks an expression whose value nothing uses (a statement, a for loop's
  // init and step).
  void walkDiscarded(const ast::ExprPtr &e) {
    discarded_ = e.get();
    walk(e);
    discarded_ = nullptr;
  }

  template <class F> void inLoop(F body) {
    ++loopDepth_;
    body();
    --loopDepth_;
  }

  static std::string unresolvedArray(size_t arity, const std::string &name) {
    return "unresolved arity-" + std::to_string(arity) + " global array " + name +
           ", missing global declaration?";
  }

  ast::LocalVar *findLocal(const std::string &name) {
    auto it = byName_.find(name);
    return it == byName_.end() ? nullptr : it->second;
  }

  static void noteUse(ast::GlobalDecl &g, bool read, bool write) {
    g.read |= read;
    g.written |= write;
  }

  // Fixes a global's arity at its first use; any other use must agree.
  bool setArity(ast::GlobalDecl &g, int arity, const Token &tok) {
    if (arity == 0 && g.maxEntries) {
      r_.diags_.error("inconsistent arity", g.tok);
      return false;
    }
    if (g.arity >= 0 && g.arity != arity) {
      std::vector<Diagnostic> chain;
      if (g.arityTok.loc.valid())
        chain.push_back(SemaDiagnostics::note(
            "arity " + std::to_string(g.arity) + " first inferred here", g.arityTok));
      r_.diags_.error("inconsistent arity (" + std::to_string(g.arity) + " vs " +
                          std::to_string(arity) + ")",
                      tok, std::move(chain));
      return false;
    }
    if (g.arity != arity) {
      g.arity = arity;
      g.arityTok = tok;
      g.indexTypes.assign(static_cast<size_t>(arity), ast::Type::Unknown);
    }
    return true;
  }

  void resolveScalar(ast::Symbol &s, bool read, bool write) {
    if (s.global || s.local)
      return;
    if (!locals_) { // probe condition: globals only
      ast::GlobalDecl *g = r_.table_.findGlobal(s.name, fileOf(s));
      if (!g) {
        r_.diags_.error("probe condition must not reference undeclared global", s.tok);
        return;
      }
      if (setArity(*g, 0, s.tok))
        s.global = g;
      noteUse(*g, read, write);
      return;
    }
    if (ast::LocalVar *l = findLocal(s.name)) {
      s.local = l;
      l->assigned |= write;
      return;
    }
    if (ast::GlobalDecl *g = r_.table_.findGlobal(s.name, fileOf(s))) {
      if (setArity(*g, 0, s.tok))
        s.global = g;
      noteUse(*g, read, write);
      warnIfShadowsAliasLocal(*g, s.tok);
      return;
    }
    // @defined(x) asks whether x exists; it does not create it.
    if (definedDepth_ > 0)
      return;
    auto l = std::make_unique<ast::LocalVar>();
    l->tok = s.tok;
    l->name = s.name;
    l->assigned = write;
    s.local = l.get();
    byName_.emplace(l->name, l.get());
    locals_->push_back(std::move(l));
  }

  // A tapset alias's local that the user declared global becomes that global
  // (as in stap: `global count probe syscall.read { count++ }` counts read's
  // byte counts); noted here, said once per global by reportShadowedAliasLocals().
  void warnIfShadowsAliasLocal(const ast::GlobalDecl &g, const Token &use) {
    const SourceFile *file = use.loc.file;
    if (!aliasChain_ || !file || !file->isLibrary || (g.file && g.file->isLibrary))
      return;
    // The alias whose body holds `use`: the last one in its file declared before it.
    const ast::AliasDecl *alias = nullptr;
    for (const ast::AliasDecl *a : *aliasChain_)
      if (a->file == file && a->tok.loc.line <= use.loc.line &&
          (!alias || a->tok.loc.line > alias->tok.loc.line))
        alias = a;
    if (!alias || alias->names.empty() || !r_.shadowsReported_.emplace(&g, alias).second)
      return;
    auto it = std::find_if(r_.shadows_.begin(), r_.shadows_.end(),
                           [&](const auto &entry) { return entry.first == &g; });
    if (it == r_.shadows_.end())
      it = r_.shadows_.insert(r_.shadows_.end(), {&g, {}});
    it->second.push_back(alias->names.front()->str() + " (" + file->name + ":" +
                         std::to_string(use.loc.line) + ":" + std::to_string(use.loc.col) + ")");
  }

  // An array name: only a global can be one.
  void resolveArray(ast::Symbol &base, size_t arity, const Token &errTok, bool read, bool write) {
    if (base.global || base.local)
      return;
    if (arity > kMaxArrayIndexes) {
      r_.diags_.error("too many array indexes (max 9)", errTok);
      return;
    }
    if (ast::LocalVar *l = findLocal(base.name); l && !l->isParam) {
      r_.diags_.error("inconsistent arity (0 vs " + std::to_string(arity) + ")", base.tok,
                      {SemaDiagnostics::note("arity 0 first inferred here", l->tok)});
      return;
    }
    if (ast::GlobalDecl *g = r_.table_.findGlobal(base.name, fileOf(base))) {
      if (setArity(*g, static_cast<int>(arity), base.tok))
        base.global = g;
      noteUse(*g, read, write);
      return;
    }
    r_.diags_.error(unresolvedArray(arity, base.name), errTok);
  }

  void resolveIndex(ast::ArrayIndex &a, bool wildcardOk, bool read, bool write) {
    bool reported = false;
    for (auto &i : a.indexes) {
      if (i)
        i->accept(*this);
      else if (!wildcardOk && !reported) {
        r_.diags_.error("wildcard not allowed in array index", a.tok);
        reported = true;
      }
    }
    if (a.base)
      resolveArray(*a.base, a.indexes.size(), a.tok, read, write);
    walk(a.hist);
  }

  // `delete x` takes a name of any arity. It reads x as well as writes it, as
  // in stap, so a global the script deletes is not displayed at exit.
  void resolveDeleted(ast::Symbol &s) {
    if (ast::LocalVar *l = locals_ ? findLocal(s.name) : nullptr) {
      s.local = l;
      l->assigned = true;
      return;
    }
    if (ast::GlobalDecl *g = r_.table_.findGlobal(s.name, fileOf(s))) {
      s.global = g;
      noteUse(*g, true, true);
      return;
    }
    r_.diags_.error("unresolved array in delete statement", s.tok);
  }

  // What an assignment or ++/-- writes to. Its errors come out after the
  // never-assigned warnings, where stap's optimizer finds them.
  void resolveLvalue(ast::Expr &e, bool alsoRead, const Token &opTok, bool assignment) {
    if (auto *s = dynamic_cast<ast::Symbol *>(&e)) {
      resolveScalar(*s, alsoRead, true);
      return;
    }
    if (auto *a = dynamic_cast<ast::ArrayIndex *>(&e)) {
      if (a->hist && assignment)
        r_.late_.push_back(SemaDiagnostics::note("Expecting lvalue for assignment", opTok));
      else if (a->hist)
        r_.late_.push_back(SemaDiagnostics::note("cannot assign to histogram buckets", a->tok));
      resolveIndex(*a, /*wildcardOk=*/false, alsoRead, true);
      return;
    }
    if (auto *t = dynamic_cast<ast::TargetSymbol *>(&e)) {
      walkComponents(t->components);
      if (resolveTarget(*t))
        r_.diags_.error(probes::contextVariableWriteError(family_, *t), t->tok);
      else if (t->skippedBadvar) // the literal 0 it became cannot be assigned
        r_.late_.push_back(SemaDiagnostics::note("Expecting lvalue for assignment", opTok));
      return;
    }
    // `$p.f = 1` parses as a concatenation; the user meant `->`.
    auto *b = dynamic_cast<ast::BinaryExpr *>(&e);
    bool concat = b && b->op == ast::BinaryOp::Concat;
    r_.late_.push_back(SemaDiagnostics::note(concat
                                                 ? "Expecting lvalue for assignment, try -> instead"
                                                 : "Expecting lvalue for assignment",
                                             opTok));
    e.accept(*this);
  }

  template <class T> void walkBranch(const std::unique_ptr<T> &n, bool dead) {
    deadDepth_ += dead ? 1 : 0;
    walk(n);
    deadDepth_ -= dead ? 1 : 0;
  }

  // The value of a condition made of @defined(...) on context variables, !, && and
  // ||, when pass 2 can tell it.
  std::optional<bool> staticCondition(ast::Expr &e) {
    if (auto *d = dynamic_cast<ast::DefinedOp *>(&e)) {
      struct Probe : ast::RecursiveVisitor {
        using RecursiveVisitor::visit;
        SymbolResolver::Visitor *self;
        bool context = false, found = true;
        void visit(ast::TargetSymbol &t) override {
          context = true;
          found = found &&
                  probes::contextVariable(self->family_, self->point_, self->resolved_, t).found;
        }
        void visit(ast::CastOp &) override { context = true, found = false; }
        void visit(ast::AtVar &) override { context = true, found = false; }
      } probe;
      probe.self = this;
      if (d->operand)
        d->operand->accept(probe);
      if (!probe.context)
        return std::nullopt;
      return probe.found;
    }
    if (auto *u = dynamic_cast<ast::UnaryExpr *>(&e); u && u->op == ast::UnaryOp::Not) {
      std::optional<bool> v = staticCondition(*u->operand);
      return v ? std::optional<bool>(!*v) : std::nullopt;
    }
    if (auto *l = dynamic_cast<ast::LogicalExpr *>(&e)) {
      std::optional<bool> a = staticCondition(*l->lhs), b = staticCondition(*l->rhs);
      bool isAnd = l->op == ast::LogicalOp::And;
      if ((a && *a != isAnd) || (b && *b != isAnd))
        return !isAnd; // false && x, true || x
      if (a && b)
        return isAnd;
    }
    return std::nullopt;
  }

  // Types a `$` variable through its probe family; false if it does not exist.
  bool resolveTarget(ast::TargetSymbol &t) {
    probes::ContextVariable cv = probes::contextVariable(family_, point_, resolved_, t);
    if (cv.found) {
      t.type = t.addressOf ? ast::Type::Long : cv.type;
      t.resolved = true;
      return true;
    }
    // --skip-badvars reads unknown variables as 0; @defined() just asks; a
    // branch @defined rules out is never compiled.
    t.type = ast::Type::Long;
    if (deadDepth_ > 0)
      t.inDeadBranch = true;
    if (definedDepth_ > 0 || deadDepth_ > 0)
      return false;
    if (!cv.error.empty() && !r_.opts_.skipBadvars)
      r_.diags_.error(cv.error, t.tok);
    else if (r_.opts_.skipBadvars) {
      r_.diags_.warning("Bad $context variable being substituted with literal 0", t.tok);
      t.skippedBadvar = true;
    } else
      r_.diags_.error("unresolved target-symbol expression", t.tok);
    return false;
  }

  void resolveCall(ast::FunctionCall &c) {
    const SourceFile *from = fileOf(c);
    auto chain = r_.table_.resolveCall(c.name, c.args.size(), from);
    if (!chain.empty()) {
      c.callees = chain;
      for (auto *f : chain)
        if (!r_.resolved_.count(f) && r_.queued_.insert(f).second)
          r_.newlyCalled_.push_back(f);
      return;
    }
    if (findBuiltin(c.name, c.args.size()))
      return;
    auto named = r_.table_.functionsNamed(c.name, from);
    size_t takes = 0;
    if (!named.empty())
      takes = named.back()->params.size();
    else if (const BuiltinFunction *b = findBuiltinByName(c.name))
      takes = b->maxArgs();
    if (!named.empty() || findBuiltinByName(c.name)) {
      r_.diags_.error("arity mismatch found (function '" + c.name + "' takes " +
                          std::to_string(takes) + " args)",
                      c.tok);
      return;
    }
    std::vector<std::string> candidates = r_.table_.functionNames(from);
    const auto &builtins = builtinNames();
    candidates.insert(candidates.end(), builtins.begin(), builtins.end());
    std::string sugs = similarNames(c.name, candidates);
    r_.diags_.error(
        "unresolved function " + c.name + (sugs.empty() ? "" : " (similar: " + sugs + ")"), c.tok);
  }

  SymbolResolver &r_;
  std::vector<std::unique_ptr<ast::LocalVar>> *locals_; // null in a probe condition
  ast::FunctionDecl *fn_;
  const probes::ProbeFamily *family_;
  const ast::ProbePoint *point_;
  probes::ResolvedPoint resolved_;
  const std::vector<const ast::AliasDecl *> *aliasChain_ = nullptr;
  std::unordered_map<std::string, ast::LocalVar *> byName_;
  int loopDepth_ = 0;
  int definedDepth_ = 0;
  int deadDepth_ = 0;                    // inside a branch a @defined condition rules out
  const ast::Expr *discarded_ = nullptr; // the expression whose value is unused
};

SymbolResolver::SymbolResolver(SymbolTable &table, SemaDiagnostics &diags, const SemaOptions &opts)
    : table_(table), diags_(diags), opts_(opts) {}

void SymbolResolver::resolveProbe(ast::DerivedProbe &probe) {
  const probes::ProbeFamily *family = probe.point ? probes::familyOf(*probe.point) : nullptr;
  if (probe.body) {
    Visitor v(*this, &probe.locals, nullptr, family, probe.point.get());
    v.setResolved(probe);
    probe.body->accept(v);
  }
  if (probe.condition) {
    Visitor v(*this, nullptr, nullptr, family, probe.point.get());
    v.setResolved(probe);
    probe.condition->accept(v);
    if (v.modifies)
      diags_.error("probe condition must not modify any variables", probe.condition->tok);
  }
}

void SymbolResolver::resolveFunction(ast::FunctionDecl &fn) {
  if (!resolved_.insert(&fn).second)
    return;
  if (fn.locals.empty())
    for (const auto &p : fn.params) {
      auto l = std::make_unique<ast::LocalVar>();
      l->tok = p.tok;
      l->name = p.name;
      l->type = p.declared;
      l->isParam = true;
      l->assigned = true;
      fn.locals.push_back(std::move(l));
    }
  if (fn.declaredReturn != ast::Type::Unknown)
    fn.returnType = fn.declaredReturn;
  if (fn.body) {
    Visitor v(*this, &fn.locals, &fn, nullptr, nullptr);
    fn.body->accept(v);
  }
}

// One warning per global: `global count probe syscall.*` takes the `count`
// of ten aliases, which ten warnings would bury.
void SymbolResolver::reportShadowedAliasLocals() {
  constexpr size_t kNamed = 3;
  for (const auto &[g, aliases] : shadows_) {
    std::string msg = "global '" + g->name + "' shadows local '" + g->name + "' of ";
    if (aliases.size() == 1) {
      msg += "probe alias " + aliases.front();
    } else {
      msg += std::to_string(aliases.size()) + " probe aliases: ";
      for (size_t i = 0; i < aliases.size() && i < kNamed; ++i)
        msg += (i ? ", " : "") + aliases[i];
      if (aliases.size() > kNamed)
        msg += " and " + std::to_string(aliases.size() - kNamed) + " more";
    }
    diags_.warning(msg, g->tok);
  }
  shadows_.clear();
}

void SymbolResolver::reportLateErrors() {
  for (auto &d : late_)
    diags_.error(std::move(d));
  late_.clear();
}

std::vector<ast::FunctionDecl *> SymbolResolver::takeNewlyCalled() {
  std::vector<ast::FunctionDecl *> out;
  out.swap(newlyCalled_);
  return out;
}

} // namespace sonde::sema
