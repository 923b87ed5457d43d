#include "sema/BuiltinCalls.h"

#include <unordered_set>

namespace sonde::sema {

namespace {

// Functions the visited code calls are queued, not entered at once, so a long
// call chain is a loop here, not a recursion.
class CallFinder : public ast::RecursiveVisitor {
public:
  using RecursiveVisitor::visit;
  explicit CallFinder(std::string_view name) : name_(name) {}

  void visit(ast::FunctionCall &c) override {
    RecursiveVisitor::visit(c);
    if (c.callees.empty() && c.name == name_)
      found = true;
    for (ast::FunctionDecl *f : c.callees)
      if (f->body && entered_.insert(f).second)
        pending.push_back(f);
  }

  bool found = false;
  std::vector<ast::FunctionDecl *> pending;

private:
  std::string_view name_;
  std::unordered_set<const ast::FunctionDecl *> entered_;
};

} // namespace

bool callsBuiltin(ast::Script &script, std::string_view name) {
  CallFinder finder(name);
  for (const auto &d : script.derived) {
    if (d->condition)
      d->condition->accept(finder);
    d->body->accept(finder);
  }
  while (!finder.found && !finder.pending.empty()) {
    ast::FunctionDecl *f = finder.pending.back();
    finder.pending.pop_back();
    f->body->accept(finder);
  }
  return finder.found;
}

} // namespace sonde::sema
