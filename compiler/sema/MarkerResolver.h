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

struct MarkerResolution {
  std::vector<ResolvedMarker> markers;
  std::string error;              // "no match (similar marks: ...)"; empty on success
  const Token *errorAt = nullptr; // where the error points, when at a component
};

// The sites `point` (a point of the Marker family, wildcards allowed in the
// process path, provider and mark) matches. `targetCommand` is the -c command
// (for a bare `process`). A process("GLOB") is every ELF file it matches, each
// resolved as a process path. On failure `markers` is empty and `error` set.
MarkerResolution resolveMarkers(const ast::ProbePoint &point, const std::string &targetCommand);

} // namespace sonde::sema
