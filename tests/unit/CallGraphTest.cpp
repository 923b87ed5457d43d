// sema/CallGraph: components callees first, closures over calls, and no
// recursion along the graph (a chain of any length).
#include "sema/CallGraph.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

namespace sonde::sema {
namespace {

// Functions f0..fN-1 and who calls whom, without a script around them.
struct Graph {
  explicit Graph(size_t n) : functions(n) {
    for (size_t i = 0; i < n; ++i)
      functions[i].name = "f" + std::to_string(i);
  }
  void call(size_t from, size_t to) { calls[&functions[from]].push_back(&functions[to]); }
  CalleesOf callees() {
    return [this](const ast::FunctionDecl *f) -> const auto & { return calls[f]; };
  }
  std::vector<const ast::FunctionDecl *> roots(std::initializer_list<size_t> which) {
    std::vector<const ast::FunctionDecl *> r;
    for (size_t i : which)
      r.push_back(&functions[i]);
    return r;
  }
  std::vector<std::set<std::string>>
  names(const std::vector<std::vector<const ast::FunctionDecl *>> &components) {
    std::vector<std::set<std::string>> out;
    for (const auto &c : components) {
      out.emplace_back();
      for (const ast::FunctionDecl *f : c)
        out.back().insert(f->name);
    }
    return out;
  }

  std::vector<ast::FunctionDecl> functions;
  std::unordered_map<const ast::FunctionDecl *, std::vector<const ast::FunctionDecl *>> calls;
};

using Names = std::vector<std::set<std::string>>;

TEST(CallGraph, ComponentsComeCalleesFirst) {
  Graph g(5);
  g.call(0, 1); // f0 -> f1 -> f2, f1 <-> f3, f4 alone (not reachable from f0)
  g.call(1, 2);
  g.call(1, 3);
  g.call(3, 1);
  EXPECT_EQ(g.names(callGraphComponents(g.roots({0}), g.callees())),
            (Names{{"f2"}, {"f1", "f3"}, {"f0"}}));
  EXPECT_EQ(g.names(callGraphComponents(g.roots({4, 0}), g.callees())),
            (Names{{"f4"}, {"f2"}, {"f1", "f3"}, {"f0"}}));
}

TEST(CallGraph, ClosureJoinsWhatEveryCalleeGives) {
  Graph g(4);
  g.call(0, 1);
  g.call(1, 2);
  g.call(2, 1); // f1 and f2 recurse into each other
  g.call(0, 3);
  using Set = std::set<std::string>;
  std::unordered_map<const ast::FunctionDecl *, Set> own;
  for (auto &f : g.functions)
    own[&f] = {f.name};
  auto closed = closeOverCalls<Set>(
      g.roots({0}), g.callees(), [&](const ast::FunctionDecl *f) -> const Set & { return own[f]; });
  EXPECT_EQ(closed[&g.functions[0]], (Set{"f0", "f1", "f2", "f3"}));
  EXPECT_EQ(closed[&g.functions[1]], (Set{"f1", "f2"}));
  EXPECT_EQ(closed[&g.functions[2]], (Set{"f1", "f2"}));
  EXPECT_EQ(closed[&g.functions[3]], (Set{"f3"}));
}

// Far longer than a recursive walk could follow on the test's stack.
TEST(CallGraph, LongChainsAreWalkedWithoutRecursion) {
  const size_t n = 300000;
  Graph g(n);
  for (size_t i = 0; i + 1 < n; ++i)
    g.call(i, i + 1);
  auto components = callGraphComponents(g.roots({0}), g.callees());
  ASSERT_EQ(components.size(), n);
  EXPECT_EQ(components.front().front(), &g.functions[n - 1]);
  EXPECT_EQ(components.back().front(), &g.functions[0]);
}

} // namespace
} // namespace sonde::sema
