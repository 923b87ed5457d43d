#include "ast/AstDump.h"

#include <string>

namespace sonde::ast {

namespace {

const char *sortDirText(SortDir d) {
  switch (d) {
  case SortDir::None: return "none";
  case SortDir::Ascending: return "+";
  case SortDir::Descending: return "-";
  }
  return "?";
}

const char *convName(FormatComponent::Conv c) {
  static const char *const names[] = {"literal", "d", "u", "x", "X", "o", "p",
                                      "c",       "s", "b", "m", "M", "%"};
  return names[static_cast<int>(c)];
}

const char *sizeText(FormatComponent::Size s) {
  switch (s) {
  case FormatComponent::Size::None: return "none";
  case FormatComponent::Size::Given: return "given";
  case FormatComponent::Size::Star: return "*";
  }
  return "?";
}

// Expressions print on one line; statements and declarations each start a new,
// indented line so that a failing comparison shows a readable diff.
class Dumper : private Visitor {
public:
  std::string run(const Script &s) {
    out_ = "(script";
    ++depth_;
    auto decl = [&](Script::DeclKind kind, size_t i) {
      switch (kind) {
      case Script::DeclKind::Global: node(*s.globals[i]); break;
      case Script::DeclKind::Function: node(*s.functions[i]); break;
      case Script::DeclKind::Probe: node(*s.probes[i]); break;
      case Script::DeclKind::Alias: node(*s.aliases[i]); break;
      }
    };
    for (auto [kind, i] : s.order)
      decl(kind, i);
    // The lists themselves, in case `order` does not cover them all.
    line();
    out_ += "(counts " + std::to_string(s.globals.size()) + ' ' +
            std::to_string(s.functions.size()) + ' ' + std::to_string(s.probes.size()) + ' ' +
            std::to_string(s.aliases.size()) + ')';
    --depth_;
    out_ += ")\n";
    return out_;
  }

private:
  void line() {
    out_ += '\n';
    out_.append(2 * static_cast<size_t>(depth_), ' ');
  }
  void node(const Node &n) { const_cast<Node &>(n).accept(*this); }
  template <class T> void opt(const std::unique_ptr<T> &n) {
    if (n)
      node(*n);
    else
      out_ += '-';
  }
  void sp() { out_ += ' '; }
  void str(const std::string &s) { out_ += quoteString(s); }
  void num(int64_t v) { out_ += std::to_string(v); }
  void exprs(const char *tag, const std::vector<ExprPtr> &list) {
    out_ += '(';
    out_ += tag;
    for (const auto &e : list) {
      sp();
      if (e)
        node(*e);
      else
        out_ += '*';
    }
    out_ += ')';
  }
  void components(const std::vector<TargetComponent> &cs) {
    for (const auto &c : cs) {
      sp();
      if (c.kind == TargetComponent::Kind::Member) {
        out_ += "(member " + c.member + ')';
      } else {
        out_ += "(subscript ";
        opt(c.index);
        out_ += ')';
      }
    }
  }
  void targetFlags(bool addressOf, int prettyDepth) {
    if (addressOf)
      out_ += " &";
    if (prettyDepth)
      out_ += " pretty=" + std::to_string(prettyDepth);
  }
  void format(const FormatComponent &c) {
    if (c.conv == FormatComponent::Conv::Literal) {
      out_ += "(text ";
      str(c.literal);
      out_ += ')';
      return;
    }
    out_ += "(conv ";
    out_ += convName(c.conv);
    out_ += " flags=";
    out_ += c.flagMinus ? "-" : "";
    out_ += c.flagPlus ? "+" : "";
    out_ += c.flagZero ? "0" : "";
    out_ += c.flagSpace ? "_" : "";
    out_ += c.flagHash ? "#" : "";
    out_ += " width=";
    out_ += sizeText(c.width);
    out_ += ':' + std::to_string(c.widthValue);
    out_ += " prec=";
    out_ += sizeText(c.precision);
    out_ += ':' + std::to_string(c.precisionValue);
    out_ += " l=" + std::to_string(c.lengthModifiers) + " src=";
    str(c.source);
    out_ += ')';
  }
  void point(const ProbePoint &p) {
    out_ += "(point";
    for (const auto &c : p.components) {
      out_ += " (" + c.name;
      if (c.arg) {
        sp();
        node(*c.arg);
      }
      out_ += ')';
    }
    if (p.optional)
      out_ += " optional";
    if (p.sufficient)
      out_ += " sufficient";
    if (p.condition) {
      out_ += " (if ";
      node(*p.condition);
      out_ += ')';
    }
    out_ += ')';
  }
  void points(const char *tag, const std::vector<std::unique_ptr<ProbePoint>> &ps) {
    out_ += '(';
    out_ += tag;
    for (const auto &p : ps) {
      sp();
      point(*p);
    }
    out_ += ')';
  }
  // A statement on its own line, one level deeper.
  template <class T> void child(const std::unique_ptr<T> &s) {
    ++depth_;
    line();
    opt(s);
    --depth_;
  }
  void binary(const char *tag, const char *op, const ExprPtr &l, const ExprPtr &r) {
    out_ += '(';
    out_ += tag;
    sp();
    out_ += op;
    sp();
    opt(l);
    sp();
    opt(r);
    out_ += ')';
  }

  // ----------------------------------------------------------- expressions
  void visit(NumberLit &n) override {
    out_ += "(num ";
    num(n.value);
    out_ += ')';
  }
  void visit(StringLit &n) override {
    out_ += "(str ";
    str(n.value);
    out_ += ')';
  }
  void visit(BinaryExpr &n) override { binary("binary", binaryOpText(n.op), n.lhs, n.rhs); }
  void visit(LogicalExpr &n) override {
    binary("logical", n.op == LogicalOp::And ? "&&" : "||", n.lhs, n.rhs);
  }
  void visit(UnaryExpr &n) override {
    out_ += "(unary ";
    out_ += unaryOpText(n.op);
    sp();
    opt(n.operand);
    out_ += ')';
  }
  void visit(CompareExpr &n) override { binary("compare", compareOpText(n.op), n.lhs, n.rhs); }
  void visit(RegexMatch &n) override {
    out_ += n.negated ? "(regex !~ " : "(regex =~ ";
    opt(n.lhs);
    sp();
    str(n.pattern);
    out_ += ')';
  }
  void visit(TernaryExpr &n) override {
    out_ += "(ternary ";
    opt(n.cond);
    sp();
    opt(n.thenExpr);
    sp();
    opt(n.elseExpr);
    out_ += ')';
  }
  void visit(AssignExpr &n) override { binary("assign", assignOpText(n.op), n.lhs, n.rhs); }
  void visit(IncDecExpr &n) override {
    out_ += n.prefix ? "(prefix " : "(postfix ";
    out_ += n.increment ? "++ " : "-- ";
    opt(n.operand);
    out_ += ')';
  }
  void visit(Symbol &n) override { out_ += "(sym " + n.name + ')'; }
  void visit(ArrayIndex &n) override {
    out_ += "(index ";
    if (n.base)
      node(*n.base);
    else
      opt(n.hist);
    sp();
    exprs("at", n.indexes);
    out_ += ')';
  }
  void visit(InExpr &n) override {
    out_ += "(in ";
    exprs("keys", n.keys);
    sp();
    if (n.base)
      node(*n.base);
    else
      opt(n.hist);
    out_ += ')';
  }
  void visit(FunctionCall &n) override {
    out_ += "(call " + n.name + ' ';
    exprs("args", n.args);
    out_ += ')';
  }
  void visit(PrintFormat &n) override {
    out_ += "(print ";
    out_ += printKindName(n.kind);
    sp();
    str(n.format);
    out_ += " (format";
    for (const auto &c : n.components) {
      sp();
      format(c);
    }
    out_ += ") ";
    exprs("args", n.args);
    if (n.hist) {
      sp();
      node(*n.hist);
    }
    out_ += ')';
  }
  void visit(StatOp &n) override {
    out_ += "(stat ";
    out_ += statFnName(n.fn);
    sp();
    opt(n.operand);
    if (n.varianceShift)
      out_ += " shift=" + std::to_string(*n.varianceShift);
    out_ += ')';
  }
  void visit(HistOp &n) override {
    out_ += n.linear ? "(hist_linear " : "(hist_log ";
    opt(n.operand);
    if (n.linear)
      out_ += ' ' + std::to_string(n.low) + ' ' + std::to_string(n.high) + ' ' +
              std::to_string(n.width);
    out_ += ')';
  }
  void visit(TargetSymbol &n) override {
    out_ += "(target " + n.name;
    targetFlags(n.addressOf, n.prettyDepth);
    components(n.components);
    out_ += ')';
  }
  void visit(CastOp &n) override {
    out_ += "(cast ";
    opt(n.operand);
    sp();
    str(n.typeName);
    sp();
    str(n.module);
    targetFlags(n.addressOf, n.prettyDepth);
    components(n.components);
    out_ += ')';
  }
  void visit(AtVar &n) override {
    out_ += "(var ";
    str(n.varName);
    sp();
    str(n.module);
    targetFlags(n.addressOf, n.prettyDepth);
    components(n.components);
    out_ += ')';
  }
  void visit(DefinedOp &n) override {
    out_ += "(defined ";
    opt(n.operand);
    out_ += ')';
  }
  void visit(EntryOp &n) override {
    out_ += "(entry ";
    opt(n.operand);
    out_ += ')';
  }
  void visit(ProbewriteOp &n) override {
    out_ += "(probewrite ";
    opt(n.var);
    out_ += ')';
  }
  void visit(SpecialAtOp &n) override {
    switch (n.kind) {
    case SpecialAtOp::Kind::Perf: out_ += "(perf"; break;
    case SpecialAtOp::Kind::Enum: out_ += "(enum"; break;
    case SpecialAtOp::Kind::EnumName: out_ += "(enumname"; break;
    }
    if (n.operand) {
      sp();
      node(*n.operand);
    }
    for (const auto &s : n.strings) {
      sp();
      str(s);
    }
    out_ += ')';
  }

  // ------------------------------------------------------------ statements
  void visit(Block &n) override {
    out_ += "(block";
    for (const auto &s : n.stmts)
      child(s);
    out_ += ')';
  }
  void visit(NullStmt &) override { out_ += "(null)"; }
  void visit(ExprStmt &n) override {
    out_ += "(expr ";
    opt(n.expr);
    out_ += ')';
  }
  void visit(IfStmt &n) override {
    out_ += "(if ";
    opt(n.cond);
    child(n.thenStmt);
    child(n.elseStmt);
    out_ += ')';
  }
  void visit(WhileStmt &n) override {
    out_ += "(while ";
    opt(n.cond);
    child(n.body);
    out_ += ')';
  }
  void visit(ForStmt &n) override {
    out_ += "(for ";
    opt(n.init);
    sp();
    opt(n.cond);
    sp();
    opt(n.incr);
    child(n.body);
    out_ += ')';
  }
  void visit(ForeachStmt &n) override {
    out_ += "(foreach value=";
    opt(n.value);
    out_ += " (keys";
    for (const auto &k : n.keys) {
      sp();
      opt(k);
    }
    out_ += ") ";
    if (n.base)
      node(*n.base);
    else
      opt(n.hist);
    sp();
    exprs("slice", n.slice);
    out_ += " (sort ";
    out_ += sortDirText(n.sortDir);
    out_ += ' ' + std::to_string(n.sortColumn) + ' ';
    out_ += n.sortAggregate ? statFnName(*n.sortAggregate) : "-";
    out_ += ") limit=";
    opt(n.limit);
    child(n.body);
    out_ += ')';
  }
  void visit(TryStmt &n) override {
    out_ += "(try";
    child(n.tryBlock);
    out_ += " catch=";
    opt(n.catchVar);
    child(n.catchBlock);
    out_ += ')';
  }
  void visit(ReturnStmt &n) override {
    out_ += "(return ";
    opt(n.value);
    out_ += ')';
  }
  void visit(DeleteStmt &n) override {
    out_ += "(delete ";
    opt(n.target);
    out_ += ')';
  }
  void visit(BreakStmt &) override { out_ += "(break)"; }
  void visit(ContinueStmt &) override { out_ += "(continue)"; }
  void visit(NextStmt &) override { out_ += "(next)"; }

  // ---------------------------------------------------------- declarations
  void visit(GlobalDecl &n) override {
    line();
    out_ += "(global " + n.name;
    if (n.isPrivate)
      out_ += " private";
    if (n.wrap)
      out_ += " wrap";
    if (n.maxEntries)
      out_ += " max=" + std::to_string(*n.maxEntries);
    out_ += " init=";
    opt(n.init);
    out_ += ')';
  }
  void visit(FunctionDecl &n) override {
    line();
    out_ += "(function " + n.name;
    if (n.isPrivate)
      out_ += " private";
    out_ += " returns=";
    out_ += typeName(n.declaredReturn);
    out_ += " (params";
    for (const auto &p : n.params) {
      out_ += " (" + p.name + ' ';
      out_ += typeName(p.declared);
      out_ += ')';
    }
    out_ += ") priority=";
    out_ += n.priority ? std::to_string(*n.priority) : "-";
    child(n.body);
    out_ += ')';
  }
  void visit(ProbeDecl &n) override {
    line();
    out_ += "(probe ";
    points("points", n.points);
    child(n.body);
    out_ += ')';
  }
  void visit(AliasDecl &n) override {
    line();
    out_ += "(alias ";
    points("names", n.names);
    out_ += n.epilogueStyle ? " += " : " = ";
    points("points", n.points);
    child(n.body);
    child(n.epilogue);
    out_ += ')';
  }

  std::string out_;
  int depth_ = 0;
};

} // namespace

std::string dumpAst(const Script &script) { return Dumper().run(script); }

} // namespace sonde::ast
