// A compiled handler module opened with dlopen(): its tables checked and its
// printf formats parsed once, ready for the session to run.
#pragma once

#include "runtime/format/FormatAbi.h"
#include "runtime/session/ModuleAbi.h"
#include "runtime/values/GlobalLayout.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace sonde::session {

class LoadedModule {
public:
  // Opens the module at `path`. On failure returns nullopt with a one-line reason.
  static std::optional<LoadedModule> open(const std::string &path, std::string *error);

  LoadedModule(LoadedModule &&) noexcept;
  LoadedModule &operator=(LoadedModule &&) noexcept;
  ~LoadedModule();

  const sonde_module_desc &desc() const { return *desc_; }
  const values::GlobalLayout &layout() const { return *layout_; }
  const SondeFormatSpec &format(uint32_t index) const { return formats_[index].spec; }
  // Where format `index` is used: a probe point, "function NAME", or "" (sprintf).
  const char *formatSource(uint32_t index) const { return desc_->format_sources[index]; }
  // Which of its arguments are gettimeofday_ns() (ModuleAbi.h format_time_args).
  uint64_t formatTimeArgs(uint32_t index) const { return desc_->format_time_args[index]; }
  const sonde_probe_desc &probe(uint32_t index) const { return desc_->probes[index]; }
  // The marker site probe `index` runs at (each marker probe has one); null
  // for other probes.
  const sonde_marker_site *markerSite(uint32_t index) const {
    return index < siteOfProbe_.size() ? siteOfProbe_[index] : nullptr;
  }
  // "operator '/' at app.probe:9:22" for a location index ("" if out of range).
  const std::string &locationText(uint32_t index) const;

private:
  LoadedModule() = default;

  struct ParsedFormat {
    std::vector<SondeFormatItem> items;
    SondeFormatSpec spec{};
  };
  void *handle_ = nullptr;
  const sonde_module_desc *desc_ = nullptr;
  std::optional<values::GlobalLayout> layout_;
  std::vector<ParsedFormat> formats_;
  std::vector<std::string> locations_;
  std::vector<const sonde_marker_site *> siteOfProbe_;
};

} // namespace sonde::session
