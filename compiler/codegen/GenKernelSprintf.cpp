// sprintf and the sprint family in kernel handlers: BPF cannot call the
// runtime's formatter, but the format is known here, so it is rewritten for the
// kernel's bpf_snprintf (64-bit conversions, at most 12 arguments per call) and
// appended chunk by chunk. What bpf_snprintf cannot write as stap does
// (precision, octal, '#' with a width, '*', %b, %m, %M) is refused.
#include "codegen/IrGenerator.h"

#include "runtime/bpf/BpfAbi.h"

namespace sonde::codegen {

namespace {

constexpr size_t kMaxArgsPerCall = 12; // the kernel's MAX_BPF_FUNC_VARARGS

std::string escapedPercents(const std::string &text) {
  std::string out;
  for (char c : text)
    out += c == '%' ? std::string("%%") : std::string(1, c);
  return out;
}

// The bpf_snprintf spelling of one conversion, or "" when it has none.
std::string kernelConversion(const SondeFormatItem &item) {
  if (item.precision_kind != SONDE_SIZE_NONE || item.width_kind == SONDE_SIZE_STAR)
    return "";
  bool hash = (item.flags & SONDE_FMT_HASH) || item.conv == SONDE_CONV_POINTER;
  bool width = item.width_kind == SONDE_SIZE_GIVEN;
  std::string spec = "%";
  if (item.flags & SONDE_FMT_LEFT)
    spec += '-';
  if (item.flags & SONDE_FMT_PLUS)
    spec += '+';
  if (item.flags & SONDE_FMT_SPACE)
    spec += ' ';
  if (item.flags & SONDE_FMT_ZERO)
    spec += '0';
  if (width)
    spec += std::to_string(item.width);
  switch (item.conv) {
  case SONDE_CONV_SIGNED_DEC: return hash ? "" : spec + "lld";
  case SONDE_CONV_UNSIGNED_DEC: return hash ? "" : spec + "llu";
  case SONDE_CONV_HEX_LOWER:
  case SONDE_CONV_POINTER: return hash ? (width ? "" : "0x%llx") : spec + "llx";
  case SONDE_CONV_HEX_UPPER: return hash ? (width ? "" : "0X%llX") : spec + "llX";
  case SONDE_CONV_CHAR: return hash ? "" : spec + "c";
  case SONDE_CONV_STRING: return hash ? "" : spec + "s";
  default: return "";
  }
}

} // namespace

// Appends `format` with `args` to `out` through bpf_snprintf.
void IrGenerator::appendKernelFormat(llvm::Value *out, const std::string &format,
                                     const std::vector<llvm::Value *> &args) {
  auto *type = llvm::ArrayType::get(b_.longTy(), std::max<size_t>(args.size(), 1));
  llvm::Value *array = statementArray(type, "snprintf.args");
  for (size_t i = 0; i < args.size(); ++i) {
    llvm::Value *v =
        args[i]->getType()->isPointerTy() ? b_.CreatePtrToInt(args[i], b_.longTy()) : args[i];
    b_.CreateStore(v, b_.CreateConstInBoundsGEP2_64(type, array, 0, i));
  }
  // The whole format, however small MAXSTRINGLEN (a cut one is no format):
  // bpf_snprintf keeps the text to the room `out` has.
  b_.CreateCall(SONDE_RT(b_, sonde_bpf_sprintf),
                {out, target_.stringConstant(b_, format), array, b_.getInt32(8 * args.size())});
}

void IrGenerator::sprintfByAppends(ast::PrintFormat &p, llvm::Value *out) {
  std::optional<std::vector<SondeFormatItem>> items = checkedFormat(p);
  if (!items)
    return;
  std::string chunk;
  std::vector<llvm::Value *> args;
  size_t arg = 0;
  for (const SondeFormatItem &item : *items) {
    std::string written = p.format.substr(item.offset, item.length);
    if (item.conv == SONDE_CONV_LITERAL || item.conv == SONDE_CONV_PERCENT) {
      chunk += item.conv == SONDE_CONV_PERCENT ? "%%" : escapedPercents(written);
      continue;
    }
    std::string spec = kernelConversion(item);
    if (spec.empty()) {
      fail("sprintf conversion '" + written +
               "' is not supported in kernel probes (precision, octal, '#' with a width, '*', "
               "%b, %m and %M are not)",
           p.tok);
      return;
    }
    if (args.size() == kMaxArgsPerCall) {
      appendKernelFormat(out, chunk, args);
      chunk.clear();
      args.clear();
    }
    chunk += spec;
    args.push_back(eval(*p.args[arg++]).v);
  }
  if (!chunk.empty())
    appendKernelFormat(out, chunk, args);
}

// sprint, sprintln, sprintd and sprintdln: each value as %d or %s.
void IrGenerator::sprintValuesByAppends(ast::PrintFormat &p, bool delimited, bool newline,
                                        llvm::Value *out) {
  b_.CreateStore(b_.getInt8(0), out);
  std::string chunk;
  std::vector<llvm::Value *> args;
  for (size_t i = 0; i < p.args.size(); ++i) {
    if (args.size() == kMaxArgsPerCall) {
      appendKernelFormat(out, chunk, args);
      chunk.clear();
      args.clear();
    }
    if (i > 0 && delimited)
      chunk += escapedPercents(p.format);
    Value v = eval(*p.args[i]);
    chunk += v.type == ast::Type::String ? "%s" : "%lld";
    args.push_back(v.v);
  }
  if (newline)
    chunk += "\n";
  if (!chunk.empty())
    appendKernelFormat(out, chunk, args);
}

} // namespace sonde::codegen
