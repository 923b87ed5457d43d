#include "sema/ProbeMatchTree.h"

#include "diag/Diagnostics.h"

#include <algorithm>
#include <set>

namespace sonde::sema {

std::string MatchKey::str() const {
  switch (arg) {
  case probes::ArgKind::Number: return name + "(number)";
  case probes::ArgKind::String: return name + "(string)";
  case probes::ArgKind::None: break;
  }
  return name;
}

MatchNode *MatchNode::child(const MatchKey &k) {
  auto &slot = children[k];
  if (!slot)
    slot = std::make_unique<MatchNode>();
  return slot.get();
}

bool MatchNode::leadsToSupported() const {
  return !ends.empty() || std::any_of(children.begin(), children.end(),
                                      [](const auto &kv) { return kv.second->leadsToSupported(); });
}

std::string MatchNode::suggest(std::string name) const {
  // Only the part before a wildcard is worth comparing.
  size_t glob = name.find('*');
  if (glob != std::string::npos && glob != 0)
    name.erase(glob);
  if (name.empty() || name == "*")
    return "";
  std::set<std::string> unique;
  for (const auto &[key, node] : children)
    if (node->leadsToSupported())
      unique.insert(key.name);
  std::vector<std::string> names(unique.begin(), unique.end());
  // A right name with the wrong argument kind is the best suggestion of all.
  std::string exact = unique.count(name) ? name : "";
  std::string rest = similarNames(name, names, exact.empty() ? 5 : 4);
  if (exact.empty())
    return rest;
  return rest.empty() ? exact : exact + ", " + rest;
}

std::string MatchNode::follow() const {
  std::string s;
  for (const auto &[key, node] : children)
    s += " " + key.str();
  return s;
}

ProbeMatchTree::ProbeMatchTree() {
  for (const auto &fam : probes::families()) {
    MatchNode *n = &root_;
    for (const auto &pc : fam.pattern)
      n = n->child({std::string(pc.name), pc.arg});
    if (fam.supported())
      n->ends.push_back({&fam, nullptr});
    else
      n->unsupported = &fam;
  }
}

std::vector<const ast::ProbePoint *> ProbeMatchTree::addAliases(const ast::Script &script) {
  std::vector<const ast::ProbePoint *> bad;
  for (const auto &alias : script.aliases) {
    for (const auto &name : alias->names) {
      bool wild = std::any_of(name->components.begin(), name->components.end(),
                              [](const auto &c) { return c.name.find('*') != std::string::npos; });
      if (wild || name->components.empty()) {
        bad.push_back(name.get());
        continue;
      }
      MatchNode *n = &root_;
      for (const auto &c : name->components)
        n = n->child({c.name, probes::argKindOf(c)});
      n->ends.push_back({nullptr, alias.get()});
    }
  }
  return bad;
}

} // namespace sonde::sema
