// Everything code generation must know about the whole script before it emits
// one instruction: where each global lives (the GlobalLayout), which probes get
// handlers, which functions they reach, the locks each handler takes, the
// MAXNESTING in force and the globals displayed at exit.
#pragma once

#include "ast/Ast.h"
#include "codegen/CodegenOptions.h"
#include "codegen/ProbeTable.h"
#include "diag/Diagnostics.h"
#include "runtime/values/GlobalLayout.h"

#include <memory>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace sonde::codegen {

// A global as generated code reaches it.
struct GlobalSlot {
  uint32_t layoutIndex = 0;
  values::GlobalPlacement placement{};
  const values::GlobalDesc *desc = nullptr;
  bool isArray() const { return desc->keyCount > 0; }
};

// A scalar global's initializer (-G values are the session's business).
struct InitialValue {
  uint32_t layoutIndex = 0;
  ast::Type type = ast::Type::Long;
  int64_t number = 0;
  std::string text;
};

struct EmittedProbe {
  const ast::DerivedProbe *probe;
  ProbeInfo info;
  std::vector<uint64_t> lockOffsets; // ascending
  std::vector<uint32_t> globals;     // layout indexes of every global it or its callees touch
};

class ScriptFacts {
public:
  // Reports what cannot be compiled (pass-3 errors) and returns nullopt then.
  static std::optional<ScriptFacts> analyze(const ast::Script &script, const CodegenOptions &opts,
                                            DiagnosticEngine &diags);

  const values::GlobalLayout &layout() const { return *layout_; }
  const GlobalSlot &slot(const ast::GlobalDecl &g) const { return slots_.at(&g); }
  // Null for a global without storage (never typed).
  const GlobalSlot *findSlot(const ast::GlobalDecl *g) const {
    auto it = slots_.find(g);
    return it == slots_.end() ? nullptr : &it->second;
  }
  const std::vector<EmittedProbe> &probes() const { return probes_; }
  bool hasKernelProbes() const;
  // Marker probes in probe order: the row of `p` in the module's site table.
  uint32_t markerSiteIndex(const EmittedProbe &p) const;
  uint32_t markerSiteCount() const;
  // Functions the emitted probes can reach, in declaration order.
  const std::vector<const ast::FunctionDecl *> &functions() const { return functions_; }
  // Whether `next` appears in the function's own body (it then reports it to its caller).
  bool usesNext(const ast::FunctionDecl &f) const { return usesNext_.count(&f) != 0; }
  int64_t maxNesting() const { return maxNesting_; }
  // The longest call chain from `f` down, `f` included (a recursive component
  // counts each of its functions once).
  int64_t callHeight(const ast::FunctionDecl &f) const { return callHeights_.at(&f); }
  // Layout indexes of the globals the end of the run prints.
  const std::vector<uint32_t> &displayGlobals() const { return display_; }
  const std::vector<InitialValue> &initialValues() const { return initial_; }
  // -t: layout index of the stats global probe `index` adds its run time to.
  std::optional<uint32_t> timingGlobal(size_t index) const {
    return index < timing_.size() ? std::optional<uint32_t>(timing_[index]) : std::nullopt;
  }

private:
  ScriptFacts() = default;

  std::shared_ptr<const values::GlobalLayout> layout_;
  std::unordered_map<const ast::GlobalDecl *, GlobalSlot> slots_;
  std::vector<EmittedProbe> probes_;
  std::vector<const ast::FunctionDecl *> functions_;
  std::unordered_set<const ast::FunctionDecl *> usesNext_;
  int64_t maxNesting_ = 0;
  std::unordered_map<const ast::FunctionDecl *, int64_t> callHeights_;
  std::vector<uint32_t> display_;
  std::vector<InitialValue> initial_;
  std::vector<uint32_t> timing_; // per probe, with -t
};

} // namespace sonde::codegen
