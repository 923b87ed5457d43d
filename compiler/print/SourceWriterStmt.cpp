// SourceWriter: statements and blocks.
#include "print/SourceWriter.h"

#include <ostream>

namespace sonde::print {

using namespace ast;

namespace {

// True if `s` ends in an `if` without `else`, which would capture an `else`
// printed right after it.
bool endsInOpenIf(const Stmt &s) {
  if (auto *i = dynamic_cast<const IfStmt *>(&s))
    return !i->elseStmt || endsInOpenIf(*i->elseStmt);
  if (auto *w = dynamic_cast<const WhileStmt *>(&s))
    return endsInOpenIf(*w->body);
  if (auto *f = dynamic_cast<const ForStmt *>(&s))
    return endsInOpenIf(*f->body);
  if (auto *f = dynamic_cast<const ForeachStmt *>(&s))
    return endsInOpenIf(*f->body);
  return false;
}

char sortChar(SortDir d) { return d == SortDir::Ascending ? '+' : '-'; }

} // namespace

void SourceWriter::newline() {
  out_ << '\n';
  for (int i = 0; i < depth_; ++i)
    out_ << "  ";
}

void SourceWriter::stmt(const Stmt &s) { dispatch(s); }

void SourceWriter::block(const Block &b) { dispatch(b); }

void SourceWriter::body(const Stmt &s) {
  if (auto *b = dynamic_cast<const Block *>(&s)) {
    out_ << ' ';
    block(*b);
    return;
  }
  indent();
  newline();
  stmt(s);
  dedent();
}

void SourceWriter::visit(Block &n) {
  out_ << '{';
  if (n.stmts.empty()) {
    out_ << '}';
    return;
  }
  indent();
  for (const auto &s : n.stmts) {
    newline();
    stmt(*s);
  }
  dedent();
  newline();
  out_ << '}';
}

void SourceWriter::visit(NullStmt &) { out_ << ';'; }

void SourceWriter::visit(ExprStmt &n) {
  expr(*n.expr);
  out_ << ';';
}

void SourceWriter::visit(IfStmt &n) {
  out_ << "if (";
  expr(*n.cond);
  out_ << ')';
  if (!n.elseStmt) {
    body(*n.thenStmt);
    return;
  }
  // The parser binds `else` to the innermost `if`; a then-branch that ends in an
  // open `if` only comes from a block, so give it its braces back.
  bool thenIsBlock = dynamic_cast<const Block *>(n.thenStmt.get()) != nullptr;
  if (!thenIsBlock && endsInOpenIf(*n.thenStmt)) {
    out_ << " {";
    indent();
    newline();
    stmt(*n.thenStmt);
    dedent();
    newline();
    out_ << '}';
    thenIsBlock = true;
  } else {
    body(*n.thenStmt);
  }
  if (thenIsBlock) {
    out_ << ' ';
  } else {
    newline();
  }
  out_ << "else";
  if (dynamic_cast<const IfStmt *>(n.elseStmt.get())) {
    out_ << ' ';
    stmt(*n.elseStmt);
  } else {
    body(*n.elseStmt);
  }
}

void SourceWriter::visit(WhileStmt &n) {
  out_ << "while (";
  expr(*n.cond);
  out_ << ')';
  body(*n.body);
}

void SourceWriter::visit(ForStmt &n) {
  out_ << "for (";
  if (n.init)
    expr(*n.init);
  out_ << ';';
  if (n.cond) {
    out_ << ' ';
    expr(*n.cond);
  }
  out_ << ';';
  if (n.incr) {
    out_ << ' ';
    expr(*n.incr);
  }
  out_ << ')';
  body(*n.body);
}

void SourceWriter::foreachHead(const ForeachStmt &n) {
  bool sorted = n.sortDir != SortDir::None;
  bool valueSortOnVar = sorted && n.sortColumn == 0 && !n.sortAggregate && n.value;
  if (n.value) {
    out_ << n.value->name;
    // `v-=` would lex as the operator `-=`.
    if (valueSortOnVar)
      out_ << sortChar(n.sortDir);
    out_ << " = ";
  }
  bool bracketKeys = n.keys.size() != 1;
  if (bracketKeys)
    out_ << '[';
  for (size_t i = 0; i < n.keys.size(); ++i) {
    if (i)
      out_ << ", ";
    out_ << n.keys[i]->name;
    if (sorted && n.sortColumn == static_cast<int>(i) + 1)
      out_ << sortChar(n.sortDir);
  }
  if (bracketKeys)
    out_ << ']';
  out_ << " in ";
  indexable(n.base, n.hist);
  if (!n.slice.empty()) {
    out_ << '[';
    indexList(n.slice);
    out_ << ']';
  }
  if (sorted && n.sortColumn == 0 && !valueSortOnVar) {
    if (n.sortAggregate)
      out_ << ' ' << statFnName(*n.sortAggregate);
    out_ << sortChar(n.sortDir);
  }
  if (n.limit) {
    out_ << " limit ";
    expr(*n.limit);
  }
}

void SourceWriter::visit(ForeachStmt &n) {
  out_ << "foreach (";
  foreachHead(n);
  out_ << ')';
  body(*n.body);
}

void SourceWriter::visit(TryStmt &n) {
  out_ << "try ";
  block(*n.tryBlock);
  out_ << " catch ";
  if (n.catchVar)
    out_ << '(' << n.catchVar->name << ") ";
  block(*n.catchBlock);
}

void SourceWriter::visit(ReturnStmt &n) {
  out_ << "return";
  if (n.value) {
    out_ << ' ';
    expr(*n.value);
  }
  out_ << ';';
}

void SourceWriter::visit(DeleteStmt &n) {
  out_ << "delete ";
  expr(*n.target);
  out_ << ';';
}

void SourceWriter::visit(BreakStmt &) { out_ << "break;"; }
void SourceWriter::visit(ContinueStmt &) { out_ << "continue;"; }
void SourceWriter::visit(NextStmt &) { out_ << "next;"; }

} // namespace sonde::print
