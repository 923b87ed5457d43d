// Built-ins that name kernel addresses (BuiltinAbi.h), for begin, end and timer
// probes that print what kernel probes captured: the classic
// `stacks[backtrace()]++` in a tracepoint, `print_stack()` in `end`.
#include "runtime/session/BuiltinAbi.h"
#include "runtime/session/Runtime.h"
#include "runtime/symbols/KernelSymbols.h"

#include <cstring>
#include <string>

using namespace sonde::session;
using sonde::symbols::KernelSymbolTable;
using sonde::symbols::SymbolStyle;

namespace {

std::string kernelSymbolText(int64_t addr, SymbolStyle style) {
  return formatSymbol(KernelSymbolTable::running().resolve(static_cast<uint64_t>(addr)), style);
}

std::string kernelStackText(const char *stack, size_t limit) {
  return sonde::symbols::formatStack(stack, SymbolStyle::Saved, limit, [](uint64_t a) {
    return KernelSymbolTable::running().resolve(a);
  });
}

void copyOut(sonde_context *ctx, char *out, const std::string &text) {
  size_t n = std::min<size_t>(text.size(), runtimeOf(ctx).maxStringLen() - 1);
  std::memcpy(out, text.data(), n);
  out[n] = '\0';
}

} // namespace

extern "C" {

void sonde_fn_symname_1(sonde_context *ctx, char *out, int64_t addr, uint32_t) {
  copyOut(ctx, out, kernelSymbolText(addr, SymbolStyle::Name));
}

void sonde_fn_symdata_1(sonde_context *ctx, char *out, int64_t addr, uint32_t) {
  copyOut(ctx, out, kernelSymbolText(addr, SymbolStyle::Data));
}

void sonde_fn_print_stack_1(sonde_context *ctx, const char *stack, uint32_t) {
  std::string text = kernelStackText(stack, 0);
  threadOf(ctx).output->append(text.data(), text.size(), *runtimeOf(ctx).output);
}

void sonde_fn_sprint_stack_1(sonde_context *ctx, char *out, const char *stack, uint32_t) {
  copyOut(ctx, out, kernelStackText(stack, runtimeOf(ctx).maxStringLen() - 1));
}

} // extern "C"
