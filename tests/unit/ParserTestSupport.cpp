#include "ParserTestSupport.h"

#include "diag/Diagnostics.h"

#include <sstream>

namespace sonde::test {

using namespace sonde::ast;

namespace {

class Dumper : public Visitor {
public:
  std::string out;

  void node(Node *n) {
    if (!n) {
      out += "*";
      return;
    }
    n->accept(*this);
  }
  template <class T> void node(const std::unique_ptr<T> &n) { node(n.get()); }
  void space() { out += ' '; }
  template <class T> void list(const std::vector<std::unique_ptr<T>> &v) {
    for (const auto &e : v) {
      space();
      node(e);
    }
  }
  void open(const std::string &head) { out += "(" + head; }
  void close() { out += ")"; }

  void visit(NumberLit &n) override { out += std::to_string(n.value); }
  void visit(StringLit &n) override { out += quoteString(n.value); }
  void visit(BinaryExpr &n) override { binary(binaryOpText(n.op), n.lhs, n.rhs); }
  void visit(LogicalExpr &n) override {
    binary(n.op == LogicalOp::And ? "&&" : "||", n.lhs, n.rhs);
  }
  void visit(CompareExpr &n) override { binary(compareOpText(n.op), n.lhs, n.rhs); }
  void visit(AssignExpr &n) override { binary(assignOpText(n.op), n.lhs, n.rhs); }
  void visit(UnaryExpr &n) override {
    open(std::string("u") + unaryOpText(n.op));
    space();
    node(n.operand);
    close();
  }
  void visit(RegexMatch &n) override {
    open(n.negated ? "!~" : "=~");
    space();
    node(n.lhs);
    out += " " + quoteString(n.pattern);
    close();
  }
  void visit(TernaryExpr &n) override {
    open("?");
    space();
    node(n.cond);
    space();
    node(n.thenExpr);
    space();
    node(n.elseExpr);
    close();
  }
  void visit(IncDecExpr &n) override {
    open(std::string(n.prefix ? "pre" : "post") + (n.increment ? "++" : "--"));
    space();
    node(n.operand);
    close();
  }
  void visit(Symbol &n) override { out += n.name; }
  void visit(ArrayIndex &n) override {
    open("index ");
    if (n.base)
      node(n.base);
    else
      node(n.hist);
    list(n.indexes);
    close();
  }
  void visit(InExpr &n) override {
    open("in [");
    for (size_t i = 0; i < n.keys.size(); ++i) {
      if (i)
        space();
      node(n.keys[i]);
    }
    out += "] ";
    if (n.base)
      node(n.base);
    else
      node(n.hist);
    close();
  }
  void visit(FunctionCall &n) override {
    open("call " + n.name);
    list(n.args);
    close();
  }
  void visit(PrintFormat &n) override {
    open(printKindName(n.kind));
    if (n.kind == PrintKind::Printf || n.kind == PrintKind::Sprintf ||
        n.kind == PrintKind::Printd || n.kind == PrintKind::Printdln ||
        n.kind == PrintKind::Sprintd || n.kind == PrintKind::Sprintdln)
      out += " " + quoteString(n.format);
    if (n.hist) {
      space();
      node(n.hist);
    }
    list(n.args);
    close();
  }
  void visit(StatOp &n) override {
    open(statFnName(n.fn));
    space();
    node(n.operand);
    if (n.varianceShift)
      out += " " + std::to_string(*n.varianceShift);
    close();
  }
  void visit(HistOp &n) override {
    open(n.linear ? "@hist_linear" : "@hist_log");
    space();
    node(n.operand);
    if (n.linear)
      out += " " + std::to_string(n.low) + " " + std::to_string(n.high) + " " +
             std::to_string(n.width);
    close();
  }
  void target(const std::string &head, std::vector<TargetComponent> &cs, bool addressOf,
              int pretty) {
    out += head;
    for (auto &c : cs) {
      if (c.kind == TargetComponent::Kind::Member) {
        out += " ->" + c.member;
      } else {
        out += " [";
        node(c.index);
        out += "]";
      }
    }
    if (addressOf)
      out += " &";
    if (pretty)
      out += " " + std::string(static_cast<size_t>(pretty), '$');
    close();
  }
  void visit(TargetSymbol &n) override {
    out += "(";
    target("target " + n.name, n.components, n.addressOf, n.prettyDepth);
  }
  void visit(CastOp &n) override {
    open("cast ");
    node(n.operand);
    target(" " + quoteString(n.typeName) + (n.module.empty() ? "" : " " + quoteString(n.module)),
           n.components, n.addressOf, n.prettyDepth);
  }
  void visit(AtVar &n) override {
    out += "(";
    target("@var " + quoteString(n.varName) + (n.module.empty() ? "" : " " + quoteString(n.module)),
           n.components, n.addressOf, n.prettyDepth);
  }
  void visit(DefinedOp &n) override { unaryHead("@defined", n.operand); }
  void visit(EntryOp &n) override { unaryHead("@entry", n.operand); }
  void visit(ProbewriteOp &n) override { out += "(@probewrite " + n.var->name + ")"; }
  void visit(SpecialAtOp &n) override {
    static const char *const names[] = {"@perf", "@enum", "@enumname"};
    open(names[static_cast<int>(n.kind)]);
    if (n.operand) {
      space();
      node(n.operand);
    }
    for (const auto &s : n.strings)
      out += " " + quoteString(s);
    close();
  }
  void visit(Block &n) override {
    open("block");
    list(n.stmts);
    close();
  }
  void visit(NullStmt &) override { out += "(null)"; }
  void visit(ExprStmt &n) override { unaryHead("expr", n.expr); }
  void visit(IfStmt &n) override {
    open("if ");
    node(n.cond);
    space();
    node(n.thenStmt);
    if (n.elseStmt) {
      space();
      node(n.elseStmt);
    }
    close();
  }
  void visit(WhileStmt &n) override {
    open("while ");
    node(n.cond);
    space();
    node(n.body);
    close();
  }
  void visit(ForStmt &n) override {
    open("for ");
    node(n.init);
    space();
    node(n.cond);
    space();
    node(n.incr);
    space();
    node(n.body);
    close();
  }
  void visit(ForeachStmt &n) override {
    open("foreach");
    if (n.value)
      out += " (value " + n.value->name + ")";
    out += " (keys";
    for (const auto &k : n.keys)
      out += " " + k->name;
    out += ") ";
    if (n.base)
      node(n.base);
    else
      node(n.hist);
    if (!n.slice.empty()) {
      out += " (slice";
      list(n.slice);
      out += ")";
    }
    if (n.sortDir != SortDir::None) {
      out +=
          " (sort " + std::to_string(n.sortColumn) + (n.sortDir == SortDir::Ascending ? "+" : "-");
      if (n.sortAggregate)
        out += std::string(" ") + statFnName(*n.sortAggregate);
      out += ")";
    }
    if (n.limit) {
      out += " (limit ";
      node(n.limit);
      out += ")";
    }
    space();
    node(n.body);
    close();
  }
  void visit(TryStmt &n) override {
    open("try ");
    node(n.tryBlock);
    out += n.catchVar ? " (catch " + n.catchVar->name + ") " : " (catch) ";
    node(n.catchBlock);
    close();
  }
  void visit(ReturnStmt &n) override {
    open("return");
    if (n.value) {
      space();
      node(n.value);
    }
    close();
  }
  void visit(DeleteStmt &n) override { unaryHead("delete", n.target); }
  void visit(BreakStmt &) override { out += "(break)"; }
  void visit(ContinueStmt &) override { out += "(continue)"; }
  void visit(NextStmt &) override { out += "(next)"; }
  void visit(GlobalDecl &n) override {
    open(std::string(n.isPrivate ? "private " : "") + "global " + n.name);
    if (n.wrap)
      out += " %";
    if (n.maxEntries)
      out += " [" + std::to_string(*n.maxEntries) + "]";
    if (n.init) {
      out += " = ";
      node(n.init);
    }
    close();
  }
  void visit(FunctionDecl &n) override {
    open(std::string(n.isPrivate ? "private " : "") + "function " + n.name);
    if (n.declaredReturn != Type::Unknown)
      out += std::string(":") + typeName(n.declaredReturn);
    out += " (";
    for (size_t i = 0; i < n.params.size(); ++i) {
      out += (i ? " " : "") + n.params[i].name;
      if (n.params[i].declared != Type::Unknown)
        out += std::string(":") + typeName(n.params[i].declared);
    }
    out += ")";
    if (n.priority)
      out += " :" + std::to_string(*n.priority);
    space();
    node(n.body);
    close();
  }
  void points(const std::vector<std::unique_ptr<ProbePoint>> &pps) {
    out += "(";
    for (size_t i = 0; i < pps.size(); ++i) {
      out += (i ? " " : "") + pps[i]->str();
      if (pps[i]->condition) {
        out += " if ";
        node(pps[i]->condition);
      }
    }
    out += ")";
  }
  void visit(ProbeDecl &n) override {
    open("probe ");
    points(n.points);
    space();
    node(n.body);
    close();
  }
  void visit(AliasDecl &n) override {
    open("alias ");
    points(n.names);
    out += n.epilogueStyle ? " += " : " = ";
    points(n.points);
    space();
    node(n.body);
    if (n.epilogue) {
      space();
      node(n.epilogue);
    }
    close();
  }

private:
  void binary(const std::string &op, const ExprPtr &l, const ExprPtr &r) {
    open(op);
    space();
    node(l);
    space();
    node(r);
    close();
  }
  void unaryHead(const std::string &head, const ExprPtr &e) {
    open(head + " ");
    node(e);
    close();
  }
};

} // namespace

ParseResult parseText(const std::string &text, const ParseOptions &opts,
                      const std::string &fileName) {
  ParseResult r;
  r.file = std::make_unique<SourceFile>(fileName, text);
  std::ostringstream diagOut;
  DiagnosticEngine diags(diagOut);
  r.ok = parseScript(*r.file, opts, diags, r.script);
  diags.flush();
  r.diagnostics = diagOut.str();
  return r;
}

std::string dump(Node &n) {
  Dumper d;
  n.accept(d);
  return d.out;
}

std::string dumpScript(const Script &script) {
  std::string out;
  for (auto [kind, index] : script.order) {
    switch (kind) {
    case Script::DeclKind::Global: out += dump(*script.globals[index]); break;
    case Script::DeclKind::Function: out += dump(*script.functions[index]); break;
    case Script::DeclKind::Probe: out += dump(*script.probes[index]); break;
    case Script::DeclKind::Alias: out += dump(*script.aliases[index]); break;
    }
    out += "\n";
  }
  return out;
}

std::string dumpStatement(const std::string &stmt) {
  ParseResult r = parseText("probe begin { " + stmt + " }");
  if (!r.ok || r.script.probes.size() != 1 || r.script.probes[0]->body->stmts.size() != 1)
    return "ERROR: " + r.diagnostics;
  return dump(*r.script.probes[0]->body->stmts[0]);
}

std::string dumpExpr(const std::string &expr) {
  ParseResult r = parseText("probe begin { " + expr + " }");
  if (!r.ok || r.script.probes.size() != 1 || r.script.probes[0]->body->stmts.size() != 1)
    return "ERROR: " + r.diagnostics;
  auto *s = dynamic_cast<ExprStmt *>(r.script.probes[0]->body->stmts[0].get());
  if (!s)
    return "ERROR: not an expression statement";
  return dump(*s->expr);
}

} // namespace sonde::test
