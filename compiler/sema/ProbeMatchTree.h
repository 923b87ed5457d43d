// The tree probe points are matched against, one level per component: the
// probe families of probes/ProbeFamilies plus every alias name of the script
// and the tapset library. Keys are a component name and its argument kind, as
// in stap, so `begin` and `begin(N)` are different children.
#pragma once

#include "ast/Ast.h"
#include "probes/ProbeFamilies.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace sonde::sema {

struct MatchKey {
  std::string name;
  probes::ArgKind arg = probes::ArgKind::None;

  bool operator<(const MatchKey &o) const { return name != o.name ? name < o.name : arg < o.arg; }
  // "ms(number)", "trace(string)", "tick".
  std::string str() const;
};

// What a complete match builds: a concrete probe of a family, or an alias
// expansion.
struct MatchEnd {
  const probes::ProbeFamily *family = nullptr;
  const ast::AliasDecl *alias = nullptr;
};

struct MatchNode {
  std::map<MatchKey, std::unique_ptr<MatchNode>> children;
  std::vector<MatchEnd> ends;
  // Set on the node of an unsupported family: any point reaching it is rejected.
  const probes::ProbeFamily *unsupported = nullptr;

  MatchNode *child(const MatchKey &k);
  // Whether some point through this node builds a probe (an alias or a supported
  // family), so that suggesting it can help.
  bool leadsToSupported() const;
  // Up to five child names close to `name` ("probe point mismatch (similar: ...)"),
  // among those that lead to a supported probe.
  std::string suggest(std::string name) const;
  // " hz(number) jiffies(number) ..." ("probe point truncated (follow: ...)").
  std::string follow() const;
};

class ProbeMatchTree {
public:
  ProbeMatchTree();
  // Registers every alias name; returns the names that cannot be registered
  // (a wildcard in an alias name) so the caller can report them.
  std::vector<const ast::ProbePoint *> addAliases(const ast::Script &script);

  const MatchNode &root() const { return root_; }

private:
  MatchNode root_;
};

} // namespace sonde::sema
