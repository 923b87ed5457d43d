#include "ast/Ast.h"

namespace sonde::ast {

const char *typeName(Type t) {
  switch (t) {
  case Type::Unknown: return "unknown";
  case Type::Long: return "long";
  case Type::String: return "string";
  case Type::Stats: return "stats";
  }
  return "unknown";
}

std::string quoteString(const std::string &s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
    case '\\': out += "\\\\"; break;
    case '"': out += "\\\""; break;
    case '\n': out += "\\n"; break;
    case '\t': out += "\\t"; break;
    case '\r': out += "\\r"; break;
    case '\a': out += "\\a"; break;
    case '\b': out += "\\b"; break;
    case '\f': out += "\\f"; break;
    case '\v': out += "\\v"; break;
    default:
      if (c < 0x20 || c >= 0x7f) {
        // Octal, not hex: "\x41b" would swallow the following hex digit.
        out += '\\';
        out += static_cast<char>('0' + ((c >> 6) & 7));
        out += static_cast<char>('0' + ((c >> 3) & 7));
        out += static_cast<char>('0' + (c & 7));
      } else {
        out += static_cast<char>(c);
      }
    }
  }
  out += '"';
  return out;
}

const char *binaryOpText(BinaryOp op) {
  static const char *const names[] = {"+",  "-", "*", "/", "%", "<<",
                                      ">>", ">>>", "&", "|", "^", "."};
  return names[static_cast<int>(op)];
}

const char *unaryOpText(UnaryOp op) {
  static const char *const names[] = {"+", "-", "!", "~"};
  return names[static_cast<int>(op)];
}

const char *compareOpText(CompareOp op) {
  static const char *const names[] = {"<", ">", "<=", ">=", "==", "!="};
  return names[static_cast<int>(op)];
}

const char *assignOpText(AssignOp op) {
  static const char *const names[] = {"=",   "+=",  "-=", "*=", "/=", "%=", "<<=",
                                      ">>=", "&=", "^=", "|=", ".=", "<<<"};
  return names[static_cast<int>(op)];
}

const char *printKindName(PrintKind k) {
  static const char *const names[] = {"print",  "println",  "sprint",    "sprintln",
                                      "printf", "sprintf",  "printd",    "printdln",
                                      "sprintd", "sprintdln", "print_char"};
  return names[static_cast<int>(k)];
}

bool printKindReturnsString(PrintKind k) {
  return k == PrintKind::Sprint || k == PrintKind::Sprintln || k == PrintKind::Sprintf ||
         k == PrintKind::Sprintd || k == PrintKind::Sprintdln;
}

const char *statFnName(StatFn f) {
  static const char *const names[] = {"@count", "@sum", "@min", "@max", "@avg", "@variance"};
  return names[static_cast<int>(f)];
}

// ------------------------------------------------------------ RecursiveVisitor

void RecursiveVisitor::walkComponents(std::vector<TargetComponent> &cs) {
  for (auto &c : cs)
    walk(c.index);
}

void RecursiveVisitor::visit(BinaryExpr &n) { walk(n.lhs); walk(n.rhs); }
void RecursiveVisitor::visit(LogicalExpr &n) { walk(n.lhs); walk(n.rhs); }
void RecursiveVisitor::visit(UnaryExpr &n) { walk(n.operand); }
void RecursiveVisitor::visit(CompareExpr &n) { walk(n.lhs); walk(n.rhs); }
void RecursiveVisitor::visit(RegexMatch &n) { walk(n.lhs); }
void RecursiveVisitor::visit(TernaryExpr &n) {
  walk(n.cond);
  walk(n.thenExpr);
  walk(n.elseExpr);
}
void RecursiveVisitor::visit(AssignExpr &n) { walk(n.lhs); walk(n.rhs); }
void RecursiveVisitor::visit(IncDecExpr &n) { walk(n.operand); }
void RecursiveVisitor::visit(ArrayIndex &n) {
  walk(n.base);
  walk(n.hist);
  for (auto &i : n.indexes)
    walk(i);
}
void RecursiveVisitor::visit(InExpr &n) {
  for (auto &k : n.keys)
    walk(k);
  walk(n.base);
  walk(n.hist);
}
void RecursiveVisitor::visit(FunctionCall &n) {
  for (auto &a : n.args)
    walk(a);
}
void RecursiveVisitor::visit(PrintFormat &n) {
  for (auto &a : n.args)
    walk(a);
  walk(n.hist);
}
void RecursiveVisitor::visit(StatOp &n) { walk(n.operand); }
void RecursiveVisitor::visit(HistOp &n) { walk(n.operand); }
void RecursiveVisitor::visit(TargetSymbol &n) { walkComponents(n.components); }
void RecursiveVisitor::visit(CastOp &n) {
  walk(n.operand);
  walkComponents(n.components);
}
void RecursiveVisitor::visit(AtVar &n) { walkComponents(n.components); }
void RecursiveVisitor::visit(DefinedOp &n) { walk(n.operand); }
void RecursiveVisitor::visit(EntryOp &n) { walk(n.operand); }
void RecursiveVisitor::visit(ProbewriteOp &n) { walk(n.var); }
void RecursiveVisitor::visit(SpecialAtOp &n) { walk(n.operand); }
void RecursiveVisitor::visit(Block &n) {
  for (auto &s : n.stmts)
    walk(s);
}
void RecursiveVisitor::visit(ExprStmt &n) { walk(n.expr); }
void RecursiveVisitor::visit(IfStmt &n) {
  walk(n.cond);
  walk(n.thenStmt);
  walk(n.elseStmt);
}
void RecursiveVisitor::visit(WhileStmt &n) {
  walk(n.cond);
  walk(n.body);
}
void RecursiveVisitor::visit(ForStmt &n) {
  walk(n.init);
  walk(n.cond);
  walk(n.incr);
  walk(n.body);
}
void RecursiveVisitor::visit(ForeachStmt &n) {
  walk(n.value);
  for (auto &k : n.keys)
    walk(k);
  walk(n.base);
  walk(n.hist);
  for (auto &s : n.slice)
    walk(s);
  walk(n.limit);
  walk(n.body);
}
void RecursiveVisitor::visit(TryStmt &n) {
  walk(n.tryBlock);
  walk(n.catchVar);
  walk(n.catchBlock);
}
void RecursiveVisitor::visit(ReturnStmt &n) { walk(n.value); }
void RecursiveVisitor::visit(DeleteStmt &n) { walk(n.target); }
void RecursiveVisitor::visit(GlobalDecl &n) { walk(n.init); }
void RecursiveVisitor::visit(FunctionDecl &n) { walk(n.body); }
void RecursiveVisitor::visit(ProbeDecl &n) {
  for (auto &p : n.points)
    walk(p->condition);
  walk(n.body);
}
void RecursiveVisitor::visit(AliasDecl &n) {
  for (auto &p : n.points)
    walk(p->condition);
  walk(n.body);
  walk(n.epilogue);
}

// ------------------------------------------------------------------ ProbePoint

std::string ProbePoint::str() const {
  std::string s;
  for (size_t i = 0; i < components.size(); ++i) {
    if (i)
      s += '.';
    const auto &c = components[i];
    s += c.name;
    if (c.arg) {
      s += '(';
      if (auto *n = dynamic_cast<const NumberLit *>(c.arg.get()))
        s += std::to_string(n->value);
      else if (auto *str = dynamic_cast<const StringLit *>(c.arg.get()))
        s += quoteString(str->value);
      s += ')';
    }
  }
  if (sufficient)
    s += '!';
  else if (optional)
    s += '?';
  return s;
}

} // namespace sonde::ast
