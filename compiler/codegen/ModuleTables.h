// The data a module exports besides its code (runtime/session/ModuleAbi.h): the
// source locations runtime errors name, the printf formats referenced by index,
// and finally the `sonde_module` descriptor tying them to the probe table, the
// serialized global layout and the handlers.
#pragma once

#include "ast/Source.h"
#include "codegen/CodegenOptions.h"
#include "codegen/ScriptFacts.h"

#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace llvm {
class Function;
class GlobalVariable;
class Module;
} // namespace llvm

namespace sonde::codegen {

class RuntimeBuilder;

class ModuleTables {
public:
  // Index of `tok` in the location table (each token once).
  uint32_t location(const Token &tok);
  // Index of a format in the format table: each (text, source) once, where
  // source names the printf's probe or function ("" for sprintf).
  // `timeArgs`: ModuleAbi.h format_time_args.
  uint32_t format(const std::string &text, const std::string &source, uint64_t timeArgs = 0);

  // The writable marker site table (runtime/session/ModuleAbi.h), one row per
  // marker probe of `facts`; created on first use, filled by emitDescriptor.
  llvm::GlobalVariable *markerSiteTable(llvm::Module &m, const ScriptFacts &facts);

  // Emits the tables and the exported `sonde_module` descriptor. `handlers[i]`
  // runs facts.probes()[i]; `initGlobals` may be null. Returns false (message in
  // *error) if the C ABI structs and their LLVM mirrors disagree.
  bool emitDescriptor(RuntimeBuilder &b, const ScriptFacts &facts,
                      const std::vector<llvm::Function *> &handlers, llvm::Function *initGlobals,
                      const CodegenOptions &opts, std::string *error);

private:
  struct Location {
    std::string kind, text, file;
    uint32_t line, column;
  };
  using LocationKey = std::tuple<const SourceFile *, uint32_t, uint32_t, int, std::string>;

  std::vector<Location> locations_;
  std::map<LocationKey, uint32_t> locationIndex_;
  llvm::GlobalVariable *markerSites_ = nullptr;
  using FormatKey = std::tuple<std::string, std::string, uint64_t>; // text, source, time args
  std::vector<FormatKey> formats_;
  std::map<FormatKey, uint32_t> formatIndex_;
};

} // namespace sonde::codegen
