#include "codegen/SourceLines.h"

#include <llvm/IR/Module.h>

#include <filesystem>
#include <optional>

namespace sonde::codegen {

namespace {

// The directory and name LLVM reads a line's text from (BTF keeps the text).
std::pair<std::string, std::string> splitPath(const std::string &path) {
  std::filesystem::path p(path);
  std::error_code ec;
  std::filesystem::path absolute = std::filesystem::absolute(p, ec);
  if (ec)
    return {".", path};
  return {absolute.parent_path().string(), absolute.filename().string()};
}

} // namespace

SourceLines::SourceLines(llvm::Module &m) : module_(m), di_(m) {
  // The same flags the runtime's bitcode carries (clang -g), so linking agrees.
  if (!m.getModuleFlag("Debug Info Version"))
    m.addModuleFlag(llvm::Module::Warning, "Debug Info Version", llvm::DEBUG_METADATA_VERSION);
  if (!m.getModuleFlag("Dwarf Version"))
    m.addModuleFlag(llvm::Module::Max, "Dwarf Version", 5);
}

llvm::DIFile *SourceLines::fileOf(const Token &tok) {
  const SourceFile *file = tok.loc.file;
  llvm::DIFile *&f = files_[file];
  if (!f) {
    auto [dir, name] = file ? splitPath(file->name) : std::pair<std::string, std::string>{".", "-"};
    // The text travels with the module: `-e` scripts have no file to read it from.
    std::optional<llvm::StringRef> source;
    if (file)
      source = file->text;
    f = di_.createFile(name, dir, std::nullopt, source);
    if (!unit_)
      unit_ = di_.createCompileUnit(llvm::dwarf::DW_LANG_C, f, "sonde", true, "", 0);
  }
  return f;
}

void SourceLines::describe(llvm::Function &f, const Token &tok, unsigned params, bool returnsInt) {
  llvm::DIFile *file = fileOf(tok);
  llvm::SmallVector<llvm::Metadata *, 4> types;
  types.push_back(returnsInt ? di_.createBasicType("int", 32, llvm::dwarf::DW_ATE_signed)
                             : nullptr);
  for (unsigned i = 0; i < params; ++i)
    types.push_back(di_.createPointerType(nullptr, 64));
  auto *type = di_.createSubroutineType(di_.getOrCreateTypeArray(types));
  bool local = f.hasLocalLinkage();
  auto *sp = di_.createFunction(
      unit_, f.getName(), f.getName(), file, tok.loc.line, type, tok.loc.line,
      llvm::DINode::FlagPrototyped,
      llvm::DISubprogram::SPFlagDefinition |
          (local ? llvm::DISubprogram::SPFlagLocalToUnit : llvm::DISubprogram::SPFlagZero));
  f.setSubprogram(sp);
}

llvm::DebugLoc SourceLines::at(const llvm::Function &f, const Token &tok) const {
  return llvm::DILocation::get(module_.getContext(), tok.loc.line, tok.loc.col, f.getSubprogram());
}

void SourceLines::finish() { di_.finalize(); }

} // namespace sonde::codegen
