#include "codegen/StockSitePaths.h"

namespace sonde::codegen {

StockSitePaths::~StockSitePaths() = default;

StockSitePath StockSitePaths::pathFor(const std::string &binary, uint64_t pc) {
  StockSitePath path;
  if (!jumpPath_) {
    path.trapReason = "--stock-sites=trap";
    return path;
  }
  std::unique_ptr<StockSiteAnalysis> &a = analyses_[binary];
  if (!a)
    a = std::make_unique<StockSiteAnalysis>(binary);
  StockSiteDecision d = a->analyse(pc);
  if (!d.plan) {
    path.trapReason = std::string(refusalName(d.refusal)) + ": " + d.reason;
    return path;
  }
  std::string error;
  path.jump = relocateDisplaced(*d.plan, &error);
  if (!path.jump)
    path.trapReason = "not-relocatable: " + error;
  return path;
}

} // namespace sonde::codegen
