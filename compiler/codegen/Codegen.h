// Passes 3 and 4 as the driver and the tests use them. No LLVM type crosses
// this header: LLVM stays private to compiler/codegen.
//
//   pass 3  generateModule(): the elaborated script as an LLVM module (-p3 prints it)
//   pass 4  emitModule():     optimised, compiled and linked into <buildDir>/module.so,
//                             a native module exporting `sonde_module`
//                             (runtime/session/ModuleAbi.h) that a process loads
//                             without LLVM.
#pragma once

#include "ast/Ast.h"
#include "codegen/CodegenOptions.h"
#include "diag/Diagnostics.h"

#include <memory>
#include <optional>
#include <string>

namespace sonde::codegen {

// stap's temporary build directory: created empty, removed with its contents
// when destroyed unless keep() was called (-k).
class BuildDirectory {
public:
  static std::optional<BuildDirectory> create(std::string *error);
  BuildDirectory(BuildDirectory &&other) noexcept;
  BuildDirectory &operator=(BuildDirectory &&other) noexcept;
  BuildDirectory(const BuildDirectory &) = delete;
  BuildDirectory &operator=(const BuildDirectory &) = delete;
  ~BuildDirectory();

  const std::string &path() const { return path_; }
  void keep() { keep_ = true; }

private:
  explicit BuildDirectory(std::string path) : path_(std::move(path)) {}
  std::string path_;
  bool keep_ = false;
};

// The result of pass 3: a verified LLVM module and the target it is built for.
class GeneratedModule {
public:
  struct Impl;
  explicit GeneratedModule(std::unique_ptr<Impl> impl);
  ~GeneratedModule();
  GeneratedModule(const GeneratedModule &) = delete;
  GeneratedModule &operator=(const GeneratedModule &) = delete;

  // The module as textual LLVM IR.
  std::string irText() const;
  Impl &impl() { return *impl_; }

private:
  std::unique_ptr<Impl> impl_;
};

// Pass 3. Null after reporting errors to `diags` (pass-3 errors are semantic
// errors: constructs or built-ins this build cannot compile).
std::unique_ptr<GeneratedModule>
generateModule(const ast::Script &script, const CodegenOptions &opts, DiagnosticEngine &diags);

// Pass 4: optimises `module` at opts.optLevel, compiles it and links it in
// opts.buildDir. Returns the module's path, or nullopt after reporting why.
std::optional<std::string> emitModule(GeneratedModule &module, const CodegenOptions &opts,
                                      DiagnosticEngine &diags);

// Passes 3 and 4 together.
std::optional<std::string> compileModule(const ast::Script &script, const CodegenOptions &opts,
                                         DiagnosticEngine &diags);

} // namespace sonde::codegen
