#include "sema/CallGraph.h"

#include <algorithm>

namespace sonde::sema {

// Tarjan's algorithm with an explicit stack of (function, next callee) frames.
std::vector<std::vector<const ast::FunctionDecl *>>
callGraphComponents(const std::vector<const ast::FunctionDecl *> &roots, const CalleesOf &callees) {
  struct Mark {
    size_t index, low;
    bool onStack;
  };
  struct Frame {
    const ast::FunctionDecl *f;
    size_t next;
  };
  std::unordered_map<const ast::FunctionDecl *, Mark> marks;
  std::vector<const ast::FunctionDecl *> stack;
  std::vector<Frame> frames;
  std::vector<std::vector<const ast::FunctionDecl *>> components;

  auto enter = [&](const ast::FunctionDecl *f) {
    size_t index = marks.size();
    marks[f] = {index, index, true};
    stack.push_back(f);
    frames.push_back({f, 0});
  };
  for (const ast::FunctionDecl *root : roots) {
    if (marks.count(root))
      continue;
    enter(root);
    while (!frames.empty()) {
      Frame &top = frames.back();
      const auto &calls = callees(top.f);
      if (top.next < calls.size()) {
        const ast::FunctionDecl *callee = calls[top.next++];
        auto it = marks.find(callee);
        if (it == marks.end()) {
          enter(callee);
        } else if (it->second.onStack) {
          Mark &m = marks.at(top.f);
          m.low = std::min(m.low, it->second.index);
        }
        continue;
      }
      const ast::FunctionDecl *f = top.f;
      frames.pop_back();
      Mark &m = marks.at(f);
      if (!frames.empty()) {
        Mark &caller = marks.at(frames.back().f);
        caller.low = std::min(caller.low, m.low);
      }
      if (m.low != m.index)
        continue;
      std::vector<const ast::FunctionDecl *> component;
      const ast::FunctionDecl *member;
      do {
        member = stack.back();
        stack.pop_back();
        marks.at(member).onStack = false;
        component.push_back(member);
      } while (member != f);
      components.push_back(std::move(component));
    }
  }
  return components;
}

} // namespace sonde::sema
