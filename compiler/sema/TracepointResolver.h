// Pass 2 for kernel.trace("..."): the tracepoints a point names, from the
// kernel's tracefs (probes/tracepoint's TracepointCatalog). Each becomes its own
// concrete point, kernel.trace("system:event"), with its record format.
#pragma once

#include "ast/Ast.h"

#include <memory>
#include <string>
#include <vector>

namespace sonde::sema {

struct ResolvedTracepointPoint {
  std::unique_ptr<ast::ProbePoint> point; // kernel.trace("system:event")
  std::shared_ptr<const probes::tracepoint::ResolvedTracepoint> tracepoint;
};

// The tracepoints `point` (of the KernelTrace family) matches. On failure
// returns an empty list and sets `error` ("no match (similar tracepoints: ...)").
std::vector<ResolvedTracepointPoint> resolveTracepoints(const ast::ProbePoint &point,
                                                        std::string &error);

} // namespace sonde::sema
