// Which path each stock <sys/sdt.h> site takes (issue 21): the jump path, with
// the relocated code its stub runs, or the trap, with the reason. One
// StockSiteAnalysis per binary, kept for the whole compilation (-L, pass 4).
#pragma once

#include "codegen/DisplacedCode.h"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

namespace sonde::codegen {

struct StockSitePath {
  std::optional<DisplacedCode> jump; // set: the jump path
  std::string trapReason;            // else "refusal-name: why"
};

class StockSitePaths {
public:
  // `jumpPath` false (--stock-sites=trap): every site traps, saying so.
  explicit StockSitePaths(bool jumpPath = true) : jumpPath_(jumpPath) {}
  ~StockSitePaths();

  StockSitePath pathFor(const std::string &binary, uint64_t pc);

private:
  bool jumpPath_;
  std::map<std::string, std::unique_ptr<StockSiteAnalysis>> analyses_;
};

} // namespace sonde::codegen
