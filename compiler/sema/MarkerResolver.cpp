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

MarkerResolution resolveMarkers(const ast::ProbePoint &point, const std::string &targetCommand) {
  MarkerResolution r;
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
        std::optional<std::string> exe = MarkerCatalog::executableOfProcess(pid->value, r.error);
        if (!exe) {
          r.error = "no match (" + r.error + ")";
          return r;
        }
        q.process = *exe;
      }
    } else if (c.name == "library") {
      q.library = *arg;
    } else if (c.name == "provider") {
      q.provider = *arg;
      providerWritten = true;
    } else if (c.name == "mark") {
      q.name = MarkerCatalog::scriptMarkerName(*arg);
      markComp = &c;
    }
  }
  q.targetCommand = MarkerCatalog::commandProgram(targetCommand);
  const Token &processAt = processComp->arg ? processComp->arg->tok : processComp->tok;

  std::vector<std::string> programs{q.process};
  const bool glob = MarkerCatalog::isProcessGlob(q.process);
  if (glob) {
    std::optional<std::vector<std::string>> files =
        MarkerCatalog::expandProcessGlob(q.process, r.error);
    if (!files) {
      r.error = "no match (" + r.error + ")";
      r.errorAt = &processAt;
      return r;
    }
    programs = std::move(*files);
  }

  // Each program on its own; under a glob, one that cannot be read or has no
  // such marker is passed over as long as another has one.
  std::set<std::string> names, searched;
  std::string firstError;
  for (const std::string &program : programs) {
    q.process = program;
    probes::marker::MarkerQueryResult found = catalog().find(q);
    if (!found.error.empty()) {
      if (!glob) {
        r.error = "no match (" + found.error + ")";
        return r;
      }
      if (firstError.empty())
        firstError = found.error;
      continue;
    }
    names.insert(found.allNames.begin(), found.allNames.end());
    searched.insert(found.objects.begin(), found.objects.end());
    for (const CatalogSite &s : found.sites) {
      auto p = std::make_unique<ast::ProbePoint>();
      p->tok = point.tok;
      p->components.push_back(component(*processComp, "process", found.program));
      if (s.binary != found.program)
        p->components.push_back(component(*processComp, "library", s.binary));
      if (providerWritten)
        p->components.push_back(component(*processComp, "provider", s.site.provider));
      p->components.push_back(component(*markComp, "mark", s.site.name));
      r.markers.push_back({std::move(p), std::make_shared<const CatalogSite>(s)});
    }
  }
  if (!r.markers.empty())
    return r;
  if (searched.empty()) { // under a glob, every file failed
    r.error = "no match (" + firstError + ")";
    r.errorAt = &processAt;
    return r;
  }
  if (names.empty()) {
    // Nothing to suggest: say why, naming the files that were looked in.
    std::string files;
    for (const std::string &f : searched)
      files += (files.empty() ? "" : ", ") + f;
    r.error = (searched.size() == 1 ? "no match: " + files + " has no SDT notes"
                                    : "no match: none of " + files + " has SDT notes") +
              " (\".note.stapsdt\"), so no markers to probe";
    r.errorAt = &processAt;
    return r;
  }
  std::string name = q.name.substr(0, q.name.find_first_of("*?["));
  std::string sugs = name.empty() ? "" : similarNames(name, {names.begin(), names.end()}, 5, 5);
  r.error = "no match" + (sugs.empty() ? "" : " (similar marks: " + sugs + ")");
  return r;
}

} // namespace sonde::sema
