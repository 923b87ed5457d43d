// Facts over the call graph of script functions, computed without recursing
// along it: a script may chain any number of functions (f0 calls f1 calls f2
// ...), so walks are iterative and closures take one pass over the graph.
#pragma once

#include "ast/Ast.h"

#include <functional>
#include <unordered_map>
#include <vector>

namespace sonde::sema {

// The functions a function calls directly (repeats allowed).
using CalleesOf =
    std::function<const std::vector<const ast::FunctionDecl *> &(const ast::FunctionDecl *)>;

// The strongly connected components of the call graph reachable from `roots`,
// callees first: every call leads into the caller's own component or an earlier
// one. A component of several functions, or of one that calls itself, is
// recursion.
std::vector<std::vector<const ast::FunctionDecl *>>
callGraphComponents(const std::vector<const ast::FunctionDecl *> &roots, const CalleesOf &callees);

// For every function reachable from `roots`: what `own` gives for it, joined
// with what it gives for every function it calls, directly or not.
template <class Set>
std::unordered_map<const ast::FunctionDecl *, Set>
closeOverCalls(const std::vector<const ast::FunctionDecl *> &roots, const CalleesOf &callees,
               const std::function<const Set &(const ast::FunctionDecl *)> &own) {
  std::unordered_map<const ast::FunctionDecl *, Set> closed;
  for (const auto &component : callGraphComponents(roots, callees)) {
    Set joined;
    for (const ast::FunctionDecl *f : component) {
      const Set &mine = own(f);
      joined.insert(mine.begin(), mine.end());
      for (const ast::FunctionDecl *callee : callees(f))
        if (auto it = closed.find(callee); it != closed.end())
          joined.insert(it->second.begin(), it->second.end());
    }
    for (const ast::FunctionDecl *f : component)
      closed[f] = joined;
  }
  return closed;
}

} // namespace sonde::sema
