#include "codegen/ModuleTables.h"

#include "codegen/RuntimeBuilder.h"
#include "codegen/SiteVectorAnalysis.h"
#include "codegen/StockSitePaths.h"
#include "probes/marker/MarkerCatalog.h"
#include "runtime/session/MarkerAbi.h"
#include "runtime/session/ModuleAbi.h"

#include <llvm/IR/Constants.h>
#include <llvm/IR/DataLayout.h>
#include <llvm/IR/GlobalVariable.h>

namespace sonde::codegen {

namespace {

// Where the user wrote the probe's point, as stap's -t report names it.
std::string probeLocation(const ast::DerivedProbe &p) {
  const Token *tok = p.originPoint ? &p.originPoint->tok : p.origin ? &p.origin->tok : nullptr;
  if (!tok || !tok->loc.valid())
    return "";
  return tok->loc.file->name + ":" + std::to_string(tok->loc.line) + ":" +
         std::to_string(tok->loc.col);
}

// Whether the module calls a built-in that unwinds from a marker frame.
bool unwindsFromFrames(const llvm::Module &m) {
  for (const char *name : {SONDE_FRAME_UNWINDING_BUILTINS})
    if (m.getFunction(name))
      return true;
  return false;
}

// Whether an argument of the site is read from the frame's rbp or r12-r15
// slots (a lean frame leaves them unwritten).
bool argumentsNeedFullFrame(const probes::marker::MarkerSite &site) {
  auto calleeSaved = [](const probes::marker::X86Register &r) {
    return r.encoding == 5 || r.encoding >= 12;
  };
  for (const probes::marker::ArgSpec &a : site.args) {
    if (const auto *reg = std::get_if<probes::marker::RegisterOperand>(&a.operand);
        reg && calleeSaved(reg->reg))
      return true;
    if (const auto *mem = std::get_if<probes::marker::MemoryOperand>(&a.operand);
        mem && ((mem->base && calleeSaved(*mem->base)) || (mem->index && calleeSaved(*mem->index))))
      return true;
  }
  return false;
}

const char *tokenKindName(TokenKind k) {
  switch (k) {
  case TokenKind::Identifier: return "identifier";
  case TokenKind::Operator: return "operator";
  case TokenKind::String: return "string";
  case TokenKind::Number: return "number";
  case TokenKind::Keyword: return "keyword";
  case TokenKind::EmbeddedCode: return "embedded-code";
  case TokenKind::EndOfFile: return "";
  }
  return "";
}

// Checks that an LLVM struct mirrors a C struct: same field offsets, same size.
bool mirrors(const llvm::DataLayout &dl, llvm::StructType *t, std::initializer_list<size_t> offsets,
             size_t size) {
  const llvm::StructLayout *sl = dl.getStructLayout(t);
  if (sl->getSizeInBytes() != size || t->getNumElements() != offsets.size())
    return false;
  unsigned i = 0;
  for (size_t off : offsets)
    if (sl->getElementOffset(i++) != off)
      return false;
  return true;
}

// A private constant global holding `init`; a pointer to it.
llvm::Constant *privateConstant(llvm::Module &m, llvm::Constant *init, const llvm::Twine &name) {
  return new llvm::GlobalVariable(m, init->getType(), true, llvm::GlobalValue::PrivateLinkage, init,
                                  name);
}

// An array of T (or null when empty) as a pointer constant.
llvm::Constant *tableOf(llvm::Module &m, llvm::Type *elem, std::vector<llvm::Constant *> rows,
                        const llvm::Twine &name) {
  if (rows.empty())
    return llvm::ConstantPointerNull::get(llvm::PointerType::getUnqual(m.getContext()));
  auto *type = llvm::ArrayType::get(elem, rows.size());
  return privateConstant(m, llvm::ConstantArray::get(type, rows), name);
}

llvm::StructType *markerSiteType(llvm::LLVMContext &c) {
  if (auto *t = llvm::StructType::getTypeByName(c, "sonde_marker_site"))
    return t;
  llvm::Type *ptr = llvm::PointerType::getUnqual(c), *i32 = llvm::Type::getInt32Ty(c),
             *i64 = llvm::Type::getInt64Ty(c);
  return llvm::StructType::create(c, {ptr, ptr, ptr, i64, i64, i32, i32, i32, i32, i64, ptr},
                                  "sonde_marker_site");
}

llvm::StructType *codeFixupType(llvm::LLVMContext &c) {
  llvm::Type *i32 = llvm::Type::getInt32Ty(c), *i64 = llvm::Type::getInt64Ty(c);
  return llvm::StructType::create(c, {i32, i32, i32, i32, i64}, "sonde_code_fixup");
}

llvm::StructType *displacedCodeType(llvm::LLVMContext &c) {
  llvm::Type *ptr = llvm::PointerType::getUnqual(c), *i32 = llvm::Type::getInt32Ty(c);
  return llvm::StructType::create(c, {i32, i32, ptr, ptr, ptr, ptr, i32, i32},
                                  "sonde_displaced_code");
}

bool displacedTypesMirror(const llvm::DataLayout &dl, llvm::StructType *fixupTy,
                          llvm::StructType *codeTy) {
  return mirrors(dl, fixupTy,
                 {offsetof(sonde_code_fixup, offset), offsetof(sonde_code_fixup, kind),
                  offsetof(sonde_code_fixup, end), offsetof(sonde_code_fixup, reserved),
                  offsetof(sonde_code_fixup, target)},
                 sizeof(sonde_code_fixup)) &&
         mirrors(dl, codeTy,
                 {offsetof(sonde_displaced_code, length), offsetof(sonde_displaced_code, code_size),
                  offsetof(sonde_displaced_code, original), offsetof(sonde_displaced_code, code),
                  offsetof(sonde_displaced_code, fixups),
                  offsetof(sonde_displaced_code, boundaries),
                  offsetof(sonde_displaced_code, fixup_count),
                  offsetof(sonde_displaced_code, boundary_count)},
                 sizeof(sonde_displaced_code));
}

// A stock site's relocated code (DisplacedCode.h) as a sonde_displaced_code.
llvm::Constant *displacedConstant(llvm::Module &m, const DisplacedCode &d,
                                  llvm::StructType *fixupTy, llvm::StructType *codeTy) {
  llvm::LLVMContext &c = m.getContext();
  llvm::Type *i32 = llvm::Type::getInt32Ty(c), *i64 = llvm::Type::getInt64Ty(c);
  auto u32 = [&](uint64_t v) { return llvm::ConstantInt::get(i32, v); };
  auto bytes = [&](const std::vector<uint8_t> &v, const char *name) {
    return privateConstant(m, llvm::ConstantDataArray::get(c, llvm::ArrayRef<uint8_t>(v)), name);
  };
  std::vector<llvm::Constant *> fixups;
  for (const CodeFixup &f : d.fixups)
    fixups.push_back(llvm::ConstantStruct::get(
        fixupTy, {u32(f.offset), u32(static_cast<uint32_t>(f.kind)), u32(f.end), u32(0),
                  llvm::ConstantInt::get(i64, f.target)}));
  std::vector<llvm::Constant *> boundaries;
  for (const CodeBoundary &b : d.boundaries) {
    boundaries.push_back(u32(b.regionOffset));
    boundaries.push_back(u32(b.codeOffset));
  }
  llvm::Constant *desc = llvm::ConstantStruct::get(
      codeTy,
      {u32(d.length), u32(d.code.size()), bytes(d.original, "sonde.displaced.original"),
       bytes(d.code, "sonde.displaced.code"), tableOf(m, fixupTy, fixups, "sonde.displaced.fixups"),
       tableOf(m, i32, boundaries, "sonde.displaced.boundaries"), u32(fixups.size()),
       u32(d.boundaries.size())});
  return privateConstant(m, desc, "sonde.displaced");
}

} // namespace

llvm::GlobalVariable *ModuleTables::markerSiteTable(llvm::Module &m, const ScriptFacts &facts) {
  if (!markerSites_) {
    auto *type = llvm::ArrayType::get(markerSiteType(m.getContext()), facts.markerSiteCount());
    // Writable: the agent stores each site's load bias before enabling it.
    markerSites_ = new llvm::GlobalVariable(m, type, false, llvm::GlobalValue::PrivateLinkage,
                                            nullptr, "sonde.marker_sites");
  }
  return markerSites_;
}

uint32_t ModuleTables::location(const Token &tok) {
  LocationKey key{tok.loc.file, tok.loc.line, tok.loc.col, static_cast<int>(tok.kind), tok.text};
  auto [it, fresh] = locationIndex_.try_emplace(key, static_cast<uint32_t>(locations_.size()));
  if (fresh)
    locations_.push_back({tokenKindName(tok.kind), tok.text,
                          tok.loc.file ? tok.loc.file->name : std::string(), tok.loc.line,
                          tok.loc.col});
  return it->second;
}

uint32_t ModuleTables::format(const std::string &text, const std::string &source,
                              uint64_t timeArgs) {
  FormatKey key{text, source, timeArgs};
  auto [it, fresh] = formatIndex_.try_emplace(key, static_cast<uint32_t>(formats_.size()));
  if (fresh)
    formats_.push_back(std::move(key));
  return it->second;
}

bool ModuleTables::emitDescriptor(RuntimeBuilder &b, const ScriptFacts &facts,
                                  const std::vector<llvm::Function *> &handlers,
                                  llvm::Function *initGlobals, const CodegenOptions &opts,
                                  std::string *error) {
  llvm::Module &m = b.module();
  llvm::LLVMContext &c = m.getContext();
  const llvm::DataLayout &dl = m.getDataLayout();
  llvm::Type *i32 = b.getInt32Ty(), *i64 = b.getInt64Ty(), *ptr = b.ptrTy();

  auto *probeTy = llvm::StructType::create(c, {i32, i32, i64, i64, i64, ptr, ptr, ptr, ptr, ptr},
                                           "sonde_probe_desc");
  llvm::StructType *siteTy = markerSiteType(c);
  llvm::StructType *fixupTy = codeFixupType(c), *displacedTy = displacedCodeType(c);
  auto *locTy = llvm::StructType::create(c, {ptr, ptr, ptr, i32, i32}, "sonde_location");
  auto *displayTy = llvm::StructType::create(c, {i32, i32}, "sonde_display_global");
  auto *moduleTy = llvm::StructType::create(c, {i32, i32, ptr, ptr, i64, i64, i32, ptr, ptr, ptr,
                                                i32, ptr, i32, ptr, i64, i64, ptr, i32, i32, ptr},
                                            "sonde_module_desc");
  bool same =
      mirrors(dl, probeTy,
              {offsetof(sonde_probe_desc, kind), offsetof(sonde_probe_desc, timing_global),
               offsetof(sonde_probe_desc, sequence), offsetof(sonde_probe_desc, period_ns),
               offsetof(sonde_probe_desc, randomize_ns), offsetof(sonde_probe_desc, pp),
               offsetof(sonde_probe_desc, pn), offsetof(sonde_probe_desc, handler),
               offsetof(sonde_probe_desc, process_path), offsetof(sonde_probe_desc, location)},
              sizeof(sonde_probe_desc)) &&
      mirrors(dl, siteTy,
              {offsetof(sonde_marker_site, binary), offsetof(sonde_marker_site, provider),
               offsetof(sonde_marker_site, name), offsetof(sonde_marker_site, pc),
               offsetof(sonde_marker_site, semaphore), offsetof(sonde_marker_site, nop_size),
               offsetof(sonde_marker_site, probe_index), offsetof(sonde_marker_site, vector_save),
               offsetof(sonde_marker_site, lean_frame), offsetof(sonde_marker_site, load_bias),
               offsetof(sonde_marker_site, displaced)},
              sizeof(sonde_marker_site)) &&
      displacedTypesMirror(dl, fixupTy, displacedTy) &&
      mirrors(dl, locTy,
              {offsetof(sonde_location, kind), offsetof(sonde_location, text),
               offsetof(sonde_location, file), offsetof(sonde_location, line),
               offsetof(sonde_location, column)},
              sizeof(sonde_location)) &&
      mirrors(
          dl, displayTy,
          {offsetof(sonde_display_global, layout_index), offsetof(sonde_display_global, reserved)},
          sizeof(sonde_display_global)) &&
      mirrors(dl, moduleTy, {offsetof(sonde_module_desc, abi_version),
                             offsetof(sonde_module_desc, probe_count),
                             offsetof(sonde_module_desc, probes),
                             offsetof(sonde_module_desc, layout),
                             offsetof(sonde_module_desc, layout_size),
                             offsetof(sonde_module_desc, layout_fingerprint),
                             offsetof(sonde_module_desc, format_count),
                             offsetof(sonde_module_desc, formats),
                             offsetof(sonde_module_desc, format_sources),
                             offsetof(sonde_module_desc, format_time_args),
                             offsetof(sonde_module_desc, location_count),
                             offsetof(sonde_module_desc, locations),
                             offsetof(sonde_module_desc, display_count),
                             offsetof(sonde_module_desc, display),
                             offsetof(sonde_module_desc, max_action),
                             offsetof(sonde_module_desc, max_nesting),
                             offsetof(sonde_module_desc, init_globals),
                             offsetof(sonde_module_desc, marker_site_count),
                             offsetof(sonde_module_desc, reserved),
                             offsetof(sonde_module_desc, marker_sites)},
              sizeof(sonde_module_desc));
  if (!same) {
    *error = "internal error: the module descriptor does not match runtime/session/ModuleAbi.h";
    return false;
  }

  auto str = [&](const std::string &s) { return b.target().stringConstant(b, s); };
  auto u32 = [&](uint64_t v) { return llvm::ConstantInt::get(i32, v); };
  auto s64 = [&](int64_t v) { return llvm::ConstantInt::getSigned(i64, v); };
  auto optionalStr = [&](const std::string &s) -> llvm::Constant * {
    return s.empty() ? llvm::ConstantPointerNull::get(b.ptrTy()) : str(s);
  };

  std::vector<llvm::Constant *> probes;
  for (size_t i = 0; i < facts.probes().size(); ++i) {
    const ProbeInfo &p = facts.probes()[i].info;
    std::optional<uint32_t> timing = facts.timingGlobal(i);
    // Kernel probes have no handler here: they run in the BPF module.
    llvm::Constant *handler =
        handlers[i] ? static_cast<llvm::Constant *>(handlers[i])
                    : static_cast<llvm::Constant *>(llvm::ConstantPointerNull::get(b.ptrTy()));
    probes.push_back(llvm::ConstantStruct::get(
        probeTy, {u32(p.kind), u32(timing ? *timing + 1 : 0), s64(p.sequence), s64(p.periodNs),
                  s64(p.randomizeNs), str(p.pp), str(p.pn), handler, optionalStr(p.processPath),
                  str(probeLocation(*facts.probes()[i].probe))}));
  }
  std::vector<llvm::Constant *> sites;
  std::map<std::string, std::unique_ptr<SiteVectorAnalysis>> vectorAnalyses; // by binary
  StockSitePaths stockPaths(opts.stockJumpPath);
  const bool unwinds = unwindsFromFrames(m);
  for (size_t i = 0; i < facts.probes().size(); ++i) {
    const EmittedProbe &p = facts.probes()[i];
    if (!p.probe->markerSite)
      continue;
    const probes::marker::CatalogSite &s = *p.probe->markerSite;
    bool fiveByte = s.site.nop == probes::marker::SiteNop::FiveByte;
    llvm::Constant *displaced = llvm::ConstantPointerNull::get(b.ptrTy());
    if (s.site.nop == probes::marker::SiteNop::OneByte)
      if (StockSitePath path = stockPaths.pathFor(s.binary, s.site.pc); path.jump)
        displaced = displacedConstant(m, *path.jump, fixupTy, displacedTy);
    bool jump = fiveByte || !displaced->isNullValue();
    SiteVectorSave save = SiteVectorSave::Full; // the trap path saves everything anyway
    if (jump) {
      std::unique_ptr<SiteVectorAnalysis> &a = vectorAnalyses[s.binary];
      if (!a)
        a = std::make_unique<SiteVectorAnalysis>(s.binary);
      save = a->saveFor(s.site.pc);
    }
    bool leanFrame =
        jump && save != SiteVectorSave::Full && !unwinds && !argumentsNeedFullFrame(s.site);
    sites.push_back(llvm::ConstantStruct::get(
        siteTy,
        {str(s.binary), str(s.site.provider), str(s.site.name),
         llvm::ConstantInt::get(i64, s.site.pc), llvm::ConstantInt::get(i64, s.site.semaphore),
         u32(fiveByte ? 5 : 1), u32(i), u32(static_cast<uint32_t>(save)), u32(leanFrame ? 1 : 0),
         llvm::ConstantInt::get(i64, 0), displaced}));
  }
  llvm::Constant *siteTable = llvm::ConstantPointerNull::get(b.ptrTy());
  if (!sites.empty()) {
    llvm::GlobalVariable *table = markerSiteTable(m, facts);
    table->setInitializer(
        llvm::ConstantArray::get(llvm::cast<llvm::ArrayType>(table->getValueType()), sites));
    siteTable = table;
  }
  std::vector<llvm::Constant *> locations;
  for (const Location &l : locations_)
    locations.push_back(llvm::ConstantStruct::get(
        locTy, {str(l.kind), str(l.text), str(l.file), u32(l.line), u32(l.column)}));
  std::vector<llvm::Constant *> formats, sources, timeArgs;
  for (const auto &[text, source, time] : formats_) {
    formats.push_back(str(text));
    sources.push_back(str(source));
    timeArgs.push_back(llvm::ConstantInt::get(i64, time));
  }
  std::vector<llvm::Constant *> display;
  for (uint32_t index : facts.displayGlobals())
    display.push_back(llvm::ConstantStruct::get(displayTy, {u32(index), u32(0)}));

  std::vector<uint8_t> layout = facts.layout().serialize();
  llvm::Constant *layoutBytes = privateConstant(
      m, llvm::ConstantDataArray::get(c, llvm::ArrayRef<uint8_t>(layout)), "sonde.layout");
  llvm::Constant *init = initGlobals ? static_cast<llvm::Constant *>(initGlobals)
                                     : llvm::ConstantPointerNull::get(b.ptrTy());

  llvm::Constant *desc = llvm::ConstantStruct::get(
      moduleTy, {u32(SONDE_MODULE_ABI_VERSION),
                 u32(probes.size()),
                 tableOf(m, probeTy, probes, "sonde.probes"),
                 layoutBytes,
                 llvm::ConstantInt::get(i64, layout.size()),
                 llvm::ConstantInt::get(i64, facts.layout().fingerprint()),
                 u32(formats.size()),
                 tableOf(m, ptr, formats, "sonde.formats"),
                 tableOf(m, ptr, sources, "sonde.format_sources"),
                 tableOf(m, i64, timeArgs, "sonde.format_time_args"),
                 u32(locations.size()),
                 tableOf(m, locTy, locations, "sonde.locations"),
                 u32(display.size()),
                 tableOf(m, displayTy, display, "sonde.display"),
                 s64(opts.limits.max_action),
                 s64(facts.maxNesting()),
                 init,
                 u32(sites.size()),
                 u32(0),
                 siteTable});
  auto *symbol = new llvm::GlobalVariable(m, moduleTy, true, llvm::GlobalValue::ExternalLinkage,
                                          desc, SONDE_MODULE_SYMBOL);
  symbol->setVisibility(llvm::GlobalValue::DefaultVisibility);
  return true;
}

} // namespace sonde::codegen
