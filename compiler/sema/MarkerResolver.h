// Pass 2 for process(...).mark(...): the marker sites a point names, found in the
// ELF notes of the process's executable and its libraries (probes/marker's
// MarkerCatalog). Each site becomes its own concrete point, so each gets a
// handler compiled for its own argument operands.
#pragma once

#include "ast/Ast.h"

#include <memory>
#include <string>
#include <vector>

namespace sonde::sema {

struct ResolvedMarker {
  std::unique_ptr<ast::ProbePoint> point; // process("/abs/exe")[.library("/abs/lib")].mark("n")
  std::shared_ptr<const probes::marker::CatalogSite> site;
};

// The sites `point` (a point of the Marker family, wildcards allowed in provider
// and mark) matches. `targetCommand` is the -c command (for a bare `process`).
// On failure returns an empty list and sets `error` ("no match (similar marks: ...)").
std::vector<ResolvedMarker> resolveMarkers(const ast::ProbePoint &point,
                                           const std::string &targetCommand, std::string &error);

} // namespace sonde::sema
