#include "sema/TracepointResolver.h"

#include "diag/Diagnostics.h"
#include "probes/tracepoint/TracepointCatalog.h"

#include <optional>

namespace sonde::sema {

namespace {

using probes::tracepoint::ResolvedTracepoint;
using probes::tracepoint::TracepointCatalog;

// One catalog per process: tracefs is listed, and each format read, once.
TracepointCatalog *catalog(std::string &error) {
  static std::optional<TracepointCatalog> shared;
  static std::string openError;
  static bool opened = false;
  if (!opened) {
    opened = true;
    shared = TracepointCatalog::open(&openError);
  }
  error = openError;
  return shared ? &*shared : nullptr;
}

} // namespace

std::vector<ResolvedTracepointPoint> resolveTracepoints(const ast::ProbePoint &point,
                                                        std::string &error) {
  const ast::ProbePointComponent &trace = point.components.back();
  auto *arg = dynamic_cast<const ast::StringLit *>(trace.arg.get());
  if (!arg) {
    error = "no match (kernel.trace needs a \"system:event\" string)";
    return {};
  }
  TracepointCatalog *tracepoints = catalog(error);
  if (!tracepoints) {
    error = "no match (" + error + ")";
    return {};
  }
  probes::tracepoint::TracepointMatch found = tracepoints->find(arg->value);
  if (!found.error.empty()) {
    error = "no match (" + found.error + ")";
    return {};
  }
  if (found.names.empty()) {
    std::string name = arg->value.substr(0, arg->value.find_first_of("*?["));
    std::string sugs = name.empty() ? "" : similarNames(name, tracepoints->names(), 5, 5);
    error = "no match" + (sugs.empty() ? "" : " (similar tracepoints: " + sugs + ")");
    return {};
  }
  std::vector<ResolvedTracepointPoint> out;
  for (const std::string &name : found.names) {
    const probes::tracepoint::TracepointFormat *format = tracepoints->format(name, &error);
    if (!format) {
      error = "no match (" + error + ")";
      return {};
    }
    auto p = std::make_unique<ast::ProbePoint>();
    p->tok = point.tok;
    for (const ast::ProbePointComponent &c : point.components) {
      std::unique_ptr<ast::StringLit> lit;
      if (&c == &trace) {
        lit = std::make_unique<ast::StringLit>();
        lit->tok = c.arg->tok;
        lit->value = name;
      }
      p->components.push_back({c.tok, c.name, std::move(lit)});
    }
    size_t colon = name.find(':');
    out.push_back({std::move(p), std::make_shared<const ResolvedTracepoint>(ResolvedTracepoint{
                                     name.substr(0, colon), name.substr(colon + 1), *format})});
  }
  return out;
}

} // namespace sonde::sema
