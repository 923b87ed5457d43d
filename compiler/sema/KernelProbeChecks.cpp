#include "sema/KernelProbeChecks.h"

#include <unordered_set>

namespace sonde::sema {

namespace {

// Walks one kernel probe's body, its condition and every function they reach
// (queued as they are called, so a long call chain is a loop, not a recursion).
class KernelLoopFinder : public ast::RecursiveVisitor {
public:
  using RecursiveVisitor::visit;
  KernelLoopFinder(SemaDiagnostics &diags, std::unordered_set<const ast::Stmt *> &reported,
                   std::string probe)
      : diags_(diags), reported_(reported), probe_(std::move(probe)) {}

  // The verifier must prove every BPF loop ends; the loop counter that bounds a
  // script's loop (MAXACTION) lives in memory it does not track.
  void visit(ast::WhileStmt &s) override {
    refuse(s, "while");
    RecursiveVisitor::visit(s);
  }
  void visit(ast::ForStmt &s) override {
    refuse(s, "for");
    RecursiveVisitor::visit(s);
  }
  void visit(ast::FunctionCall &c) override {
    RecursiveVisitor::visit(c);
    for (ast::FunctionDecl *f : c.callees)
      if (f->body && entered_.insert(f).second)
        pending_.push_back(f);
  }

  // The functions called so far, and those they call, in the order first called.
  void walkCalled() {
    for (size_t i = 0; i < pending_.size(); ++i)
      pending_[i]->body->accept(*this);
  }

private:
  void refuse(const ast::Stmt &s, const char *keyword) {
    if (reported_.insert(&s).second)
      diags_.error(std::string(keyword) + " loops are not supported in kernel probes (" + probe_ +
                       " runs as a BPF program, which cannot loop without a bound the "
                       "kernel's verifier can prove; loop in an end or timer probe)",
                   s.tok);
  }

  SemaDiagnostics &diags_;
  std::unordered_set<const ast::Stmt *> &reported_;
  std::unordered_set<const ast::FunctionDecl *> entered_;
  std::vector<ast::FunctionDecl *> pending_;
  std::string probe_;
};

} // namespace

void checkKernelProbes(ast::Script &script, SemaDiagnostics &diags) {
  std::unordered_set<const ast::Stmt *> reported;
  for (const auto &d : script.derived) {
    if (!d->tracepoint)
      continue;
    KernelLoopFinder finder(diags, reported, d->point->str());
    if (d->condition)
      d->condition->accept(finder);
    d->body->accept(finder);
    finder.walkCalled();
  }
}

} // namespace sonde::sema
