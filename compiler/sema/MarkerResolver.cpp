#include "sema/MarkerResolver.h"

#include "ast/Clone.h"
#include "diag/Diagnostics.h"
#include "probes/marker/MarkerCatalog.h"

#include <set>

namespace sonde::sema {

namespace {

using probes::marker::CatalogSite;
using probes::marker::MarkerCatalog;
using probes::marker::MarkerQuery;

const std::string *stringArg(const ast::ProbePointComponent &c) {
  auto *s = dynamic_cast<const ast::StringLit *>(c.arg.get());
  return s ? &s->value : nullptr;
}

ast::ProbePointComponent component(const ast::ProbePointComponent &like, const char *name,
                                   const std::string &value) {
  auto lit = std::make_unique<ast::StringLit>();
  lit->tok = like.arg ? like.arg->tok : like.tok;
  lit->value = value;
  return {like.tok, name, std::move(lit)};
}

MarkerCatalog &catalog() {
  static MarkerCatalog shared;
  return shared;
}

} // namespace

std::vector<ResolvedMarker> resolveMarkers(const ast::ProbePoint &point,
                                           const std::string &targetCommand, std::string &error) {
  MarkerQuery q;
  const ast::ProbePointComponent *processComp = nullptr, *markComp = nullptr;
  bool providerWritten = false;
  for (const auto &c : point.components) {
    const std::string *arg = stringArg(c);
    if (c.name == "process") {
      processComp = &c;
      q.process = arg ? *arg : "";
      // process(PID): the executable that process runs (sonde attaches to it).
      if (auto *pid = dynamic_cast<const ast::NumberLit *>(c.arg.get())) {
        std::optional<std::string> exe = MarkerCatalog::executableOfProcess(pid->value, error);
        if (!exe) {
          error = "no match (" + error + ")";
          return {};
        }
        q.process = *exe;
      }
    } else if (c.name == "library") {
      q.library = *arg;
    } else if (c.name == "provider") {
      q.provider = *arg;
      providerWritten = true;
    } else if (c.name == "mark") {
      // dtrace spells "__" in marker names as "-", and so may the script.
      q.name.clear();
      for (char ch : *arg)
        q.name += ch == '-' ? std::string("__") : std::string(1, ch);
      markComp = &c;
    }
  }
  q.targetCommand = MarkerCatalog::commandProgram(targetCommand);

  probes::marker::MarkerQueryResult found = catalog().find(q);
  if (!found.error.empty()) {
    error = "no match (" + found.error + ")";
    return {};
  }
  if (found.sites.empty()) {
    std::set<std::string> unique(found.allNames.begin(), found.allNames.end());
    std::string name = q.name.substr(0, q.name.find_first_of("*?["));
    std::string sugs = name.empty() ? "" : similarNames(name, {unique.begin(), unique.end()}, 5, 5);
    error = "no match" + (sugs.empty() ? "" : " (similar marks: " + sugs + ")");
    return {};
  }

  std::vector<ResolvedMarker> out;
  const std::string &executable = found.program;
  for (const CatalogSite &s : found.sites) {
    auto p = std::make_unique<ast::ProbePoint>();
    p->tok = point.tok;
    p->components.push_back(component(*processComp, "process", executable));
    if (s.binary != executable)
      p->components.push_back(component(*processComp, "library", s.binary));
    if (providerWritten)
      p->components.push_back(component(*processComp, "provider", s.site.provider));
    p->components.push_back(component(*markComp, "mark", s.site.name));
    out.push_back({std::move(p), std::make_shared<const CatalogSite>(s)});
  }
  return out;
}

} // namespace sonde::sema
