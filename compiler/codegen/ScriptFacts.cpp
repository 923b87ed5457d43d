#include "codegen/ScriptFacts.h"

#include "runtime/session/ModuleAbi.h"
#include "sema/CallGraph.h"

#include <algorithm>
#include <functional>

namespace sonde::codegen {

namespace {

const ast::GlobalDecl *aggregateOf(const ast::Expr *e) {
  if (auto *s = dynamic_cast<const ast::Symbol *>(e))
    return s->global;
  if (auto *a = dynamic_cast<const ast::ArrayIndex *>(e); a && a->base)
    return a->base->global;
  return nullptr;
}

// What one body (a probe's or a function's own code) touches directly.
struct BodyUse {
  std::unordered_set<const ast::GlobalDecl *> globals;
  std::vector<const ast::FunctionDecl *> calls;
  bool hasNext = false;
};

class UseCollector : public ast::RecursiveVisitor {
public:
  using RecursiveVisitor::visit;
  explicit UseCollector(BodyUse &use) : use_(use) {}

  void visit(ast::Symbol &s) override {
    if (s.global)
      use_.globals.insert(s.global);
  }
  void visit(ast::FunctionCall &c) override {
    RecursiveVisitor::visit(c);
    for (const ast::FunctionDecl *f : c.callees)
      use_.calls.push_back(f);
  }
  void visit(ast::NextStmt &) override { use_.hasNext = true; }

private:
  BodyUse &use_;
};

// The stats shape each aggregate global is used with (sema checked consistency).
class ShapeCollector : public ast::RecursiveVisitor {
public:
  using RecursiveVisitor::visit;
  std::unordered_map<const ast::GlobalDecl *, values::GlobalDesc> shapes;

  void visit(ast::StatOp &n) override {
    RecursiveVisitor::visit(n);
    if (const ast::GlobalDecl *g = aggregateOf(n.operand.get()); g && n.fn == ast::StatFn::Variance)
      noteVariance(*g, n.varianceShift.value_or(0));
  }
  void visit(ast::HistOp &n) override {
    RecursiveVisitor::visit(n);
    const ast::GlobalDecl *g = aggregateOf(n.operand.get());
    if (!g)
      return;
    values::GlobalDesc &d = shapes[g];
    d.hist = n.linear ? values::HistKind::Linear : values::HistKind::Log;
    if (n.linear) {
      d.histLow = n.low;
      d.histHigh = n.high;
      d.histWidth = n.width;
    }
  }
  void visit(ast::ForeachStmt &n) override {
    RecursiveVisitor::visit(n);
    if (n.base && n.base->global && n.sortAggregate == ast::StatFn::Variance)
      noteVariance(*n.base->global, 0);
  }

private:
  void noteVariance(const ast::GlobalDecl &g, int64_t shift) {
    values::GlobalDesc &d = shapes[&g];
    d.usesVariance = true;
    if (shift != 0)
      d.varianceShift = static_cast<uint32_t>(shift);
  }
};

values::ValueKind valueKindOf(ast::Type t) {
  switch (t) {
  case ast::Type::String: return values::ValueKind::String;
  case ast::Type::Stats: return values::ValueKind::Stats;
  default: return values::ValueKind::Long;
  }
}

class Analyzer {
public:
  Analyzer(const ast::Script &script, const CodegenOptions &opts, DiagnosticEngine &diags)
      : script_(script), opts_(opts), diags_(diags) {}

  bool selectProbes(std::vector<EmittedProbe> &out) {
    bool ok = true;
    for (const auto &dp : script_.derived) {
      ProbeInfo info = describeProbe(*dp, opts_);
      if (info.disposition == ProbeInfo::Disposition::Never)
        continue;
      if (info.disposition == ProbeInfo::Disposition::Unsupported) {
        diags_.semanticError(info.problem, dp->point->tok);
        ok = false;
        continue;
      }
      out.push_back({dp.get(), std::move(info), {}, {}});
    }
    return ok;
  }

  // Direct uses of every probe and every function reachable from them.
  void collectUses(const std::vector<EmittedProbe> &probes) {
    std::vector<const ast::FunctionDecl *> pending;
    auto scan = [&](BodyUse &use, ast::Node *n) {
      if (!n)
        return;
      UseCollector c(use);
      n->accept(c);
      for (const ast::FunctionDecl *f : use.calls)
        if (!functionUse_.count(f))
          pending.push_back(f);
    };
    for (const EmittedProbe &p : probes) {
      BodyUse &use = probeUse_[p.probe];
      scan(use, p.probe->body.get());
      scan(use, p.probe->condition.get());
    }
    while (!pending.empty()) {
      const ast::FunctionDecl *f = pending.back();
      pending.pop_back();
      if (functionUse_.count(f))
        continue;
      BodyUse &use = functionUse_[f];
      scan(use, f->body.get());
    }
  }

  std::vector<const ast::FunctionDecl *> reachableFunctions() const {
    std::vector<const ast::FunctionDecl *> v;
    for (const auto &f : script_.functions)
      if (functionUse_.count(f.get()))
        v.push_back(f.get());
    return v;
  }

  // Globals a function may touch, itself or through its callees.
  std::unordered_map<const ast::FunctionDecl *, std::unordered_set<const ast::GlobalDecl *>>
  transitiveGlobals() const {
    using GlobalSet = std::unordered_set<const ast::GlobalDecl *>;
    return sema::closeOverCalls<GlobalSet>(reachableFunctions(), callsOf(),
                                           [&](const ast::FunctionDecl *f) -> const GlobalSet & {
                                             return functionUse_.at(f).globals;
                                           });
  }

  // The longest call chain from a probe; recursion adds stap's 10 levels of
  // slack (a recursive component counts each of its functions once). `depth`:
  // each function's own longest chain.
  int64_t computeNesting(std::unordered_map<const ast::FunctionDecl *, int64_t> &depth) const {
    bool recursive = false;
    for (const auto &component : sema::callGraphComponents(reachableFunctions(), callsOf())) {
      int64_t below = 0;
      for (const ast::FunctionDecl *f : component)
        for (const ast::FunctionDecl *callee : functionUse_.at(f).calls) {
          if (auto it = depth.find(callee); it != depth.end())
            below = std::max(below, it->second);
          else
            recursive = true; // a call within the component
        }
      for (const ast::FunctionDecl *f : component)
        depth[f] = below + static_cast<int64_t>(component.size());
    }
    int64_t deepest = 0;
    for (const auto &[probe, use] : probeUse_)
      for (const ast::FunctionDecl *f : use.calls)
        deepest = std::max(deepest, depth.at(f));
    return recursive ? deepest + 10 : deepest;
  }

  const BodyUse &probeUse(const ast::DerivedProbe *p) const { return probeUse_.at(p); }
  const std::unordered_map<const ast::FunctionDecl *, BodyUse> &functionUses() const {
    return functionUse_;
  }

private:
  sema::CalleesOf callsOf() const {
    return [this](const ast::FunctionDecl *f) -> const std::vector<const ast::FunctionDecl *> & {
      return functionUse_.at(f).calls;
    };
  }

  const ast::Script &script_;
  const CodegenOptions &opts_;
  DiagnosticEngine &diags_;
  std::unordered_map<const ast::DerivedProbe *, BodyUse> probeUse_;
  std::unordered_map<const ast::FunctionDecl *, BodyUse> functionUse_;
};

// A unique layout name (private globals of different files may share one),
// added to `taken`.
std::string layoutName(const ast::GlobalDecl &g, std::unordered_set<std::string> &taken) {
  std::string name = g.name;
  if (taken.count(name)) {
    std::string base = g.name + "@" + (g.file ? g.file->name : std::string("?"));
    name = base;
    for (int i = 2; taken.count(name); ++i)
      name = base + "#" + std::to_string(i);
  }
  taken.insert(name);
  return name;
}

// `global x = 5`: the values a new segment starts with.
std::vector<InitialValue>
initializersOf(const ast::Script &script,
               const std::unordered_map<const ast::GlobalDecl *, GlobalSlot> &slots) {
  std::vector<InitialValue> out;
  for (const auto &g : script.globals) {
    auto it = slots.find(g.get());
    if (!g->init || it == slots.end())
      continue;
    InitialValue v{it->second.layoutIndex, g->type, 0, {}};
    if (auto *n = dynamic_cast<const ast::NumberLit *>(g->init.get()))
      v.number = n->value;
    else if (auto *s = dynamic_cast<const ast::StringLit *>(g->init.get()))
      v.text = s->value;
    out.push_back(std::move(v));
  }
  return out;
}

// Kernel probes keep globals in BPF maps, probes in traced processes in the
// segment: one global cannot be in both (probes in sonde itself can share).
bool checkKernelSharing(const ScriptFacts &facts, DiagnosticEngine &diags) {
  auto inTarget = [](uint32_t kind) {
    return kind == SONDE_PROBE_MARKER || kind == SONDE_PROBE_PROCESS_BEGIN ||
           kind == SONDE_PROBE_PROCESS_END || kind == SONDE_PROBE_THREAD_BEGIN ||
           kind == SONDE_PROBE_THREAD_END;
  };
  std::unordered_map<uint32_t, const EmittedProbe *> kernelUser;
  for (const EmittedProbe &p : facts.probes())
    if (p.info.kind == SONDE_PROBE_KERNEL_TRACE)
      for (uint32_t g : p.globals)
        kernelUser.emplace(g, &p);
  for (const EmittedProbe &p : facts.probes()) {
    if (!inTarget(p.info.kind))
      continue;
    for (uint32_t g : p.globals)
      if (auto it = kernelUser.find(g); it != kernelUser.end()) {
        diags.semanticError("global '" + facts.layout().globals()[g].name + "' is used by " +
                                it->second->info.pp + " (in the kernel) and by " + p.info.pp +
                                " (in a traced process); kernel and process probes cannot share "
                                "a global (share it through probes that run in sonde: begin, "
                                "end, timers)",
                            p.probe->originPoint->tok);
        return false;
      }
  }
  return true;
}

} // namespace

std::optional<ScriptFacts> ScriptFacts::analyze(const ast::Script &script,
                                                const CodegenOptions &opts,
                                                DiagnosticEngine &diags) {
  ScriptFacts facts;
  Analyzer an(script, opts, diags);
  bool ok = an.selectProbes(facts.probes_);
  an.collectUses(facts.probes_);
  facts.functions_ = an.reachableFunctions();

  ShapeCollector shapes;
  for (const EmittedProbe &p : facts.probes_)
    p.probe->body->accept(shapes);
  for (const ast::FunctionDecl *f : facts.functions_)
    f->body->accept(shapes);

  std::vector<values::GlobalDesc> descs;
  std::vector<const ast::GlobalDecl *> declOf;
  std::unordered_set<std::string> layoutNames;
  for (const auto &g : script.globals) {
    if (g->arity < 0 || g->type == ast::Type::Unknown)
      continue; // never used: sema elided it or left it untyped
    values::GlobalDesc d;
    if (auto it = shapes.shapes.find(g.get()); it != shapes.shapes.end())
      d = it->second;
    d.name = layoutName(*g, layoutNames);
    d.value = valueKindOf(g->type);
    d.keyCount = static_cast<uint8_t>(std::min<int>(g->arity, 255));
    for (size_t i = 0; i < g->indexTypes.size() && i < d.keys.size(); ++i)
      d.keys[i] =
          g->indexTypes[i] == ast::Type::String ? values::KeyKind::String : values::KeyKind::Long;
    d.maxEntries = g->maxEntries ? static_cast<uint32_t>(*g->maxEntries) : 0;
    d.wrap = g->wrap;
    descs.push_back(std::move(d));
    declOf.push_back(g.get());
  }
  // -t: one scalar stats global per handler, after the script's, under a name
  // no script identifier can take (the session finds it through the probe table).
  size_t firstTiming = descs.size();
  if (opts.probeTiming)
    for (size_t i = 0; i < facts.probes_.size(); ++i) {
      values::GlobalDesc d;
      d.name = "-t probe " + std::to_string(i);
      d.value = values::ValueKind::Stats;
      d.usesVariance = true;
      descs.push_back(std::move(d));
    }
  std::string error;
  auto layout =
      values::GlobalLayout::build(std::move(descs), opts.limits, values::hostCpuSlots(), &error);
  if (!layout) {
    diags.semanticError(error);
    return std::nullopt;
  }
  facts.layout_ = std::make_shared<values::GlobalLayout>(std::move(*layout));
  for (size_t i = firstTiming; i < facts.layout_->globals().size(); ++i) {
    facts.timing_.push_back(static_cast<uint32_t>(i));
    facts.probes_[i - firstTiming].globals.push_back(static_cast<uint32_t>(i));
  }
  for (size_t i = 0; i < declOf.size(); ++i) {
    facts.slots_[declOf[i]] = {static_cast<uint32_t>(i), facts.layout_->placements()[i],
                               &facts.layout_->globals()[i]};
    // stap prints globals the script writes but never reads; tapset globals never.
    const ast::GlobalDecl &g = *declOf[i];
    bool tapset = g.file && g.file->isLibrary;
    if (g.written && !g.read && !tapset && opts.displayGlobals)
      facts.display_.push_back(static_cast<uint32_t>(i));
  }

  // Locks: every global a handler or its callees touch, except scalar stats,
  // which are per-CPU and lock-free.
  auto calleeGlobals = an.transitiveGlobals();
  for (EmittedProbe &p : facts.probes_) {
    std::unordered_set<const ast::GlobalDecl *> touched = an.probeUse(p.probe).globals;
    for (const ast::FunctionDecl *f : an.probeUse(p.probe).calls)
      touched.insert(calleeGlobals[f].begin(), calleeGlobals[f].end());
    for (const ast::GlobalDecl *g : touched) {
      auto it = facts.slots_.find(g);
      if (it == facts.slots_.end())
        continue;
      const GlobalSlot &s = it->second;
      p.globals.push_back(s.layoutIndex);
      if (!s.isArray() && s.desc->value == values::ValueKind::Stats)
        continue;
      p.lockOffsets.push_back(s.placement.offset);
    }
    std::sort(p.lockOffsets.begin(), p.lockOffsets.end());
    std::sort(p.globals.begin(), p.globals.end());
  }
  ok = checkKernelSharing(facts, diags) && ok;

  facts.initial_ = initializersOf(script, facts.slots_);
  for (const auto &[f, use] : an.functionUses())
    if (use.hasNext)
      facts.usesNext_.insert(f);
  int64_t nesting = an.computeNesting(facts.callHeights_);
  facts.maxNesting_ = opts.maxNesting.value_or(nesting);
  if (!ok)
    return std::nullopt;
  return facts;
}

bool ScriptFacts::hasKernelProbes() const {
  return std::any_of(probes_.begin(), probes_.end(),
                     [](const EmittedProbe &p) { return p.info.kind == SONDE_PROBE_KERNEL_TRACE; });
}

uint32_t ScriptFacts::markerSiteIndex(const EmittedProbe &p) const {
  uint32_t index = 0;
  for (const EmittedProbe &q : probes_) {
    if (&q == &p)
      return index;
    if (q.probe->markerSite)
      ++index;
  }
  return index;
}

uint32_t ScriptFacts::markerSiteCount() const {
  uint32_t n = 0;
  for (const EmittedProbe &q : probes_)
    n += q.probe->markerSite ? 1 : 0;
  return n;
}

} // namespace sonde::codegen
