// Helpers for the pass 3-4 tests: compile a script (passes 1-4, no tapset
// library), load the module, and run its handlers directly on a fresh segment,
// or run the whole `sonde` binary for output and runtime errors.
#pragma once

#include "codegen/Codegen.h"
#include "runtime/session/ModuleAbi.h"
#include "runtime/transport/RecordCursor.h"
#include "runtime/values/GlobalLayout.h"
#include "runtime/values/Segment.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace sonde::test {

// Passes 1-3: the module's IR text, or the diagnostics that stopped it.
struct GeneratedIr {
  bool ok = false;
  std::string ir;
  std::string diagnostics;
};
GeneratedIr generateIr(const std::string &script, const codegen::CodegenOptions &opts = {});

// Passes 1-4, then dlopen(): the module lives as long as this object.
class CompiledModule {
public:
  static std::unique_ptr<CompiledModule> compile(const std::string &script,
                                                 const codegen::CodegenOptions &opts = {});
  ~CompiledModule();

  bool ok() const { return desc_ != nullptr; }
  const std::string &diagnostics() const { return diagnostics_; }
  const std::string &path() const { return path_; }
  const sonde_module_desc &desc() const { return *desc_; }
  const values::GlobalLayout &layout() const { return *layout_; }
  // Index of the probe whose pp() is `pp` (first match), or -1.
  int probe(const std::string &pp) const;

private:
  CompiledModule() = default;
  std::optional<codegen::BuildDirectory> dir_;
  std::string path_, diagnostics_;
  void *handle_ = nullptr;
  const sonde_module_desc *desc_ = nullptr;
  std::optional<values::GlobalLayout> layout_;
};

// Runs handlers of a module directly on a new segment, with a bare context (no
// session runtime): for handlers that neither print nor fail.
class HandlerHarness {
public:
  explicit HandlerHarness(const CompiledModule &m);

  // Runs probe `index` with a fresh context; returns the context's error.
  int32_t run(int index);
  // The relay cursor later runs' printf records go to (sonde_context::record_cursor).
  void appendRecordsTo(sonde_record_cursor *cursor) { recordCursor_ = cursor; }
  // Runs the module's global initializer, as the session does on a new segment.
  void initialize();
  values::Segment &segment() { return *segment_; }

  int64_t longGlobal(const std::string &name) const;
  std::string stringGlobal(const std::string &name) const;
  // a[keys] of a long-valued array (keys as sonde_key: .l or .s).
  int64_t mapLong(const std::string &name, const std::vector<sonde_key> &keys) const;
  uint32_t mapCount(const std::string &name) const;
  // @count etc. of scalar stats.
  int64_t stat(const std::string &name, int32_t extractor) const;
  uint64_t offsetOf(const std::string &name) const;

private:
  const char *data(const std::string &name) const;
  const CompiledModule &module_;
  std::optional<values::Segment> segment_;
  sonde_record_cursor *recordCursor_ = nullptr;
};

// The `sonde` binary run on `script` with extra command-line options.
struct SondeRun {
  int status = -1;
  std::string out, err;
};
SondeRun runSonde(const std::string &script, const std::vector<std::string> &options = {});

} // namespace sonde::test
