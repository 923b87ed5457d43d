#include "codegen/BackendDiagnostics.h"

#include <llvm/IR/DiagnosticInfo.h>
#include <llvm/IR/DiagnosticPrinter.h>
#include <llvm/IR/Instructions.h>
#include <llvm/Support/raw_ostream.h>

#include <algorithm>
#include <map>
#include <set>

namespace sonde::codegen {

namespace {

constexpr uint64_t kBpfStackBytes = 512;

bool isBpfStackLimit(const std::string &message) {
  return message.find("BPF stack limit") != std::string::npos;
}

// What an entry-block alloca of generated code holds, from the name IrGenerator
// gave it (inlining appends ".i", ".i2", ...; LLVM numbers repeated names).
std::string describeSlot(llvm::StringRef name) {
  auto allDigits = [](llvm::StringRef s) {
    return std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  for (size_t dot;
       (dot = name.rfind(".i")) != llvm::StringRef::npos && allDigits(name.drop_front(dot + 2));)
    name = name.take_front(dot);
  static const std::pair<const char *, const char *> kSlots[] = {
      {"fmtargs", "printf arguments"}, {"snprintf.args", "sprintf arguments"},
      {"values", "print arguments"},   {"keys", "array keys"},
      {"summary", "statistics"},       {"stat", "statistics"},
      {"bucket", "statistics"},        {"parms", "$$parms"},
      {"retval", "function results"},  {"ref", "references to array elements"},
  };
  llvm::StringRef base = name.rtrim("0123456789");
  for (const auto &[slot, what] : kSlots)
    if (base == slot)
      return what;
  if (name.empty())
    return "the runtime's own variables";
  return "local '" + name.str() + "'";
}

// The stack `fn` asks for, by what it holds, largest first.
std::vector<std::pair<std::string, uint64_t>> stackUse(const llvm::Function &fn) {
  std::map<std::string, uint64_t> bytes;
  const llvm::DataLayout &layout = fn.getParent()->getDataLayout();
  for (const llvm::Instruction &i : fn.getEntryBlock())
    if (auto *slot = llvm::dyn_cast<llvm::AllocaInst>(&i))
      if (std::optional<llvm::TypeSize> size = slot->getAllocationSize(layout))
        bytes[describeSlot(slot->getName())] += size->getFixedValue();
  std::vector<std::pair<std::string, uint64_t>> use(bytes.begin(), bytes.end());
  std::sort(use.begin(), use.end(), [](const auto &a, const auto &b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  return use;
}

std::string stackLimitMessage(const llvm::Module &m, const std::string &function,
                              const FunctionOrigin *origin) {
  std::string text = (origin ? origin->what : std::string("a kernel probe")) +
                     " needs more stack than a BPF program has (" + std::to_string(kBpfStackBytes) +
                     " bytes)";
  if (const llvm::Function *fn = m.getFunction(function); fn && !fn->isDeclaration()) {
    std::string largest;
    for (const auto &[what, bytes] : stackUse(*fn))
      if (bytes >= 16 && largest.size() < 200)
        largest +=
            (largest.empty() ? "" : ", ") + what + " take " + std::to_string(bytes) + " bytes";
    if (!largest.empty())
      text += ": " + largest;
  }
  return text + ". Give the printf and sprintf calls of one statement fewer values (8 bytes "
                "each), split the work between probes, or do it in a timer or end probe "
                "(strings do not count: they live in a per-CPU map)";
}

} // namespace

BackendDiagnostics::BackendDiagnostics(llvm::LLVMContext &context)
    : context_(context), previous_(context.getDiagnosticHandlerCallBack()),
      previousContext_(context.getDiagnosticContext()) {
  context_.setDiagnosticHandlerCallBack(&BackendDiagnostics::collect, this);
}

BackendDiagnostics::~BackendDiagnostics() {
  context_.setDiagnosticHandlerCallBack(previous_, previousContext_);
}

void BackendDiagnostics::collect(const llvm::DiagnosticInfo *diagnostic, void *self) {
  const llvm::DiagnosticInfo &info = *diagnostic;
  if (info.getSeverity() != llvm::DS_Error && info.getSeverity() != llvm::DS_Warning)
    return;
  Entry e;
  e.error = info.getSeverity() == llvm::DS_Error;
  if (auto *unsupported = llvm::dyn_cast<llvm::DiagnosticInfoUnsupported>(&info)) {
    e.function = unsupported->getFunction().getName().str();
    e.message = unsupported->getMessage().str();
  } else {
    if (auto *limit = llvm::dyn_cast<llvm::DiagnosticInfoResourceLimit>(&info))
      e.function = limit->getFunction().getName().str();
    llvm::raw_string_ostream os(e.message);
    llvm::DiagnosticPrinterRawOStream printer(os);
    info.print(printer);
  }
  static_cast<BackendDiagnostics *>(self)->entries_.push_back(std::move(e));
}

bool BackendDiagnostics::report(const llvm::Module &m, const char *target,
                                const FunctionOrigins &origins, DiagnosticEngine &diags) {
  bool ok = true;
  std::set<std::pair<std::string, std::string>> seen; // LLVM repeats itself
  for (const Entry &e : entries_) {
    if (!seen.emplace(e.function, e.message).second)
      continue;
    auto it = origins.find(e.function);
    const FunctionOrigin *origin = it == origins.end() ? nullptr : &it->second;
    std::string text;
    if (isBpfStackLimit(e.message))
      text = stackLimitMessage(m, e.function, origin);
    else
      text = std::string("LLVM's ") + target + " code generator cannot compile " +
             (origin               ? origin->what
              : e.function.empty() ? "the module"
                                   : e.function) +
             ": " + e.message;
    const Token *tok = origin ? origin->tok : nullptr;
    if (e.error) {
      ok = false;
      tok ? diags.semanticError(text, *tok) : diags.semanticError(text);
    } else {
      tok ? diags.warning(text, *tok) : diags.warning(text);
    }
  }
  entries_.clear();
  return ok;
}

} // namespace sonde::codegen
