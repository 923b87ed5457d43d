#include "codegen/Codegen.h"

#include "codegen/BackendDiagnostics.h"
#include "codegen/BpfTarget.h"
#include "codegen/IrGenerator.h"
#include "codegen/ModuleEmitter.h"
#include "probes/tracepoint/TracepointFormat.h"
#include "runtime/transport/OutputPaths.h"

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

#include <cstdlib>
#include <filesystem>
#include <set>

namespace sonde::codegen {

// ------------------------------------------------------------------ BuildDirectory

// The module sonde and traced processes load is read by path: the directory
// is private and the path to it one no other user can change
// (runtime/transport/OutputPaths.h), or a swapped module would run as them.
std::optional<BuildDirectory> BuildDirectory::create(std::string *error) {
  std::error_code ec;
  std::filesystem::path tmp = std::filesystem::temp_directory_path(ec);
  if (ec)
    tmp = "/tmp";
  std::string why;
  std::string path = transport::createPrivateDirectory(tmp.string(), "sonde", &why);
  if (path.empty()) {
    *error = "cannot create a temporary directory in " + tmp.string() + " (TMPDIR): " + why;
    return std::nullopt;
  }
  return BuildDirectory(path);
}

BuildDirectory::BuildDirectory(BuildDirectory &&other) noexcept
    : path_(std::move(other.path_)), keep_(other.keep_) {
  other.path_.clear();
}

BuildDirectory &BuildDirectory::operator=(BuildDirectory &&other) noexcept {
  std::swap(path_, other.path_);
  std::swap(keep_, other.keep_);
  return *this;
}

BuildDirectory::~BuildDirectory() {
  if (path_.empty() || keep_)
    return;
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

// ------------------------------------------------------------------ GeneratedModule

GeneratedModule::GeneratedModule(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
GeneratedModule::~GeneratedModule() = default;

std::string GeneratedModule::irText() const {
  std::string text;
  llvm::raw_string_ostream os(text);
  impl_->module->print(os, nullptr);
  if (impl_->kernelModule)
    impl_->kernelModule->print(os, nullptr);
  return text;
}

namespace {

bool generateKernelModule(GeneratedModule::Impl &impl, const ScriptFacts &facts,
                          ModuleTables &tables, const CodegenOptions &opts,
                          DiagnosticEngine &diags) {
  std::string error;
  std::unique_ptr<BpfTarget> target =
      makeBpfTarget(bpf::KernelStateShape::of(facts.layout()), opts.kernelHz, &error);
  if (!target) {
    diags.semanticError(error);
    return false;
  }
  auto module = std::make_unique<llvm::Module>("sonde.kernel", *impl.context);
  target->prepareModule(*module);
  IrGenerator gen(facts, tables, *module, *target, opts, diags);
  if (!gen.generate())
    return false;
  std::vector<BpfTarget::Entry> entries;
  std::set<uint32_t> globals;
  for (size_t i = 0; i < facts.probes().size(); ++i)
    if (llvm::Function *handler = gen.handlers()[i]) {
      const auto &tp = *facts.probes()[i].probe->tracepoint;
      entries.push_back({static_cast<uint32_t>(i), handler, tp.system, tp.event,
                         gen.readsArguments(i), &tp.format, facts.probes()[i].info.pp,
                         facts.probes()[i].info.pn});
      globals.insert(facts.probes()[i].globals.begin(), facts.probes()[i].globals.end());
    }
  BpfTarget::FinishError failure;
  if (!target->finish(*module, entries, {globals.begin(), globals.end()}, opts.limits.max_action,
                      &failure)) {
    if (failure.probeIndex)
      diags.semanticError(failure.message,
                          facts.probes()[*failure.probeIndex].probe->originPoint->tok);
    else
      diags.semanticError(failure.message);
    return false;
  }
  std::string problems;
  llvm::raw_string_ostream os(problems);
  if (llvm::verifyModule(*module, &os)) {
    diags.semanticError("internal error: the generated BPF IR does not verify: " + problems);
    return false;
  }
  impl.kernelTarget = std::move(target);
  impl.kernelModule = std::move(module);
  return true;
}

} // namespace

std::unique_ptr<GeneratedModule>
generateModule(const ast::Script &script, const CodegenOptions &opts, DiagnosticEngine &diags) {
  std::string error;
  auto impl = std::make_unique<GeneratedModule::Impl>();
  impl->target = makeNativeTarget(opts.optLevel, &error);
  if (!impl->target) {
    diags.semanticError(error);
    return nullptr;
  }
  impl->context = std::make_unique<llvm::LLVMContext>();
  impl->module = std::make_unique<llvm::Module>("sonde", *impl->context);
  impl->target->prepareModule(*impl->module);

  std::optional<ScriptFacts> facts = ScriptFacts::analyze(script, opts, diags);
  if (!facts)
    return nullptr;
  ModuleTables tables;
  IrGenerator gen(*facts, tables, *impl->module, *impl->target, opts, diags);
  if (!gen.generate())
    return nullptr;
  // Kernel probes: a BPF module of their own, sharing formats and locations.
  if (facts->hasKernelProbes() && !generateKernelModule(*impl, *facts, tables, opts, diags))
    return nullptr;
  for (size_t i = 0; i < facts->probes().size(); ++i) {
    const EmittedProbe &p = facts->probes()[i];
    FunctionOrigin origin{p.info.pp, &p.probe->originPoint->tok};
    impl->origins["probe." + std::to_string(i)] = origin;
    impl->origins["sonde_probe_" + std::to_string(i)] = origin;
  }
  for (const ast::FunctionDecl *f : facts->functions())
    impl->origins["function." + f->name] = {"function " + f->name, &f->tok};
  if (!tables.emitDescriptor(gen.builder(), *facts, gen.handlers(), gen.globalInitializer(), opts,
                             &error)) {
    diags.semanticError(error);
    return nullptr;
  }
  std::string problems;
  llvm::raw_string_ostream os(problems);
  if (llvm::verifyModule(*impl->module, &os)) {
    diags.semanticError("internal error: the generated IR does not verify: " + problems);
    return nullptr;
  }
  return std::make_unique<GeneratedModule>(std::move(impl));
}

std::optional<std::string> emitModule(GeneratedModule &module, const CodegenOptions &opts,
                                      DiagnosticEngine &diags) {
  GeneratedModule::Impl &m = module.impl();
  if (opts.buildDir.empty()) {
    diags.semanticError("internal error: no build directory for the module");
    return std::nullopt;
  }
  std::string error;
  BackendDiagnostics backend(*m.context);
  if (m.kernelModule) {
    // BPF code is always optimised: the verifier needs loops bounded and the
    // 512-byte stack respected, which -O0 code does not give.
    optimizeModule(*m.kernelModule, m.kernelTarget->machine(), std::max(opts.optLevel, 2u));
    std::string objectPath = opts.buildDir + "/kernel.o";
    std::string kernelPath = opts.buildDir + "/" + m.kernelTarget->moduleFileName();
    bool emitted = m.kernelTarget->emitObject(*m.kernelModule, objectPath, &error);
    if (!backend.report(*m.kernelModule, "BPF", m.origins, diags))
      return std::nullopt;
    if (!emitted || !m.kernelTarget->link(objectPath, kernelPath, &error)) {
      diags.semanticError(error);
      return std::nullopt;
    }
  }
  optimizeModule(*m.module, m.target->machine(), opts.optLevel);
  std::string objectPath = opts.buildDir + "/module.o";
  std::string modulePath = opts.buildDir + "/" + m.target->moduleFileName();
  bool emitted = m.target->emitObject(*m.module, objectPath, &error);
  if (!backend.report(*m.module, "native", m.origins, diags))
    return std::nullopt;
  if (!emitted || !m.target->link(objectPath, modulePath, &error)) {
    diags.semanticError(error);
    return std::nullopt;
  }
  return modulePath;
}

std::optional<std::string> compileModule(const ast::Script &script, const CodegenOptions &opts,
                                         DiagnosticEngine &diags) {
  std::unique_ptr<GeneratedModule> module = generateModule(script, opts, diags);
  if (!module)
    return std::nullopt;
  return emitModule(*module, opts, diags);
}

} // namespace sonde::codegen
