// `$` context variables and @defined. Markers: each handler is compiled for one
// site (pass 2 resolved it), so `$argN` becomes a load of that site's operand from
// the registers the agent saved (runtime/session/MarkerAbi.h), with the width and
// signedness the note gives.
#include "codegen/IrGenerator.h"

#include "probes/marker/MarkerCatalog.h"
#include "runtime/session/ContextAbi.h"
#include "runtime/session/MarkerAbi.h"
#include "runtime/session/ModuleAbi.h"

#include <cstddef>

namespace sonde::codegen {

namespace {

using probes::marker::ArgSpec;
using probes::marker::X86Register;

// Where the trampoline saved the 64-bit register with this hardware number.
size_t frameOffset(int encoding) {
  switch (encoding) {
  case 0: return offsetof(sonde_marker_frame, rax);
  case 1: return offsetof(sonde_marker_frame, rcx);
  case 2: return offsetof(sonde_marker_frame, rdx);
  case 3: return offsetof(sonde_marker_frame, rbx);
  case 4: return offsetof(sonde_marker_frame, rsp);
  case 5: return offsetof(sonde_marker_frame, rbp);
  case 6: return offsetof(sonde_marker_frame, rsi);
  case 7: return offsetof(sonde_marker_frame, rdi);
  case 8: return offsetof(sonde_marker_frame, r8);
  case 9: return offsetof(sonde_marker_frame, r9);
  case 10: return offsetof(sonde_marker_frame, r10);
  case 11: return offsetof(sonde_marker_frame, r11);
  case 12: return offsetof(sonde_marker_frame, r12);
  case 13: return offsetof(sonde_marker_frame, r13);
  case 14: return offsetof(sonde_marker_frame, r14);
  default: return offsetof(sonde_marker_frame, r15);
  }
}

// Whether an expression reads the probe's context ($vars, @cast, @var), and
// whether every `$` variable in it resolved for this probe.
class ContextUse : public ast::RecursiveVisitor {
public:
  using RecursiveVisitor::visit;
  bool found = false, allResolved = true;
  void visit(ast::TargetSymbol &t) override {
    found = true;
    allResolved = allResolved && t.resolved;
  }
  void visit(ast::CastOp &) override { found = allResolved = false; }
  void visit(ast::AtVar &) override { found = allResolved = false; }
};

} // namespace

// The full 64-bit value of a saved register.
llvm::Value *IrGenerator::markerRegister(const X86Register &reg) {
  llvm::Value *frame = b_.CreateLoad(
      b_.ptrTy(), b_.contextField(fs_.ctx, offsetof(sonde_context, probe_data)), "frame");
  return b_.CreateLoad(b_.longTy(), b_.bytePtr(frame, frameOffset(reg.encoding)), reg.name);
}

// runtime address - link-time address of the object holding the probe's marker.
llvm::Value *IrGenerator::markerLoadBias() {
  llvm::GlobalVariable *sites = tables_.markerSiteTable(module_, facts_);
  llvm::Value *row = b_.bytePtr(sites, static_cast<size_t>(facts_.markerSiteIndex(*probe_)) *
                                           sizeof(sonde_marker_site));
  return b_.CreateLoad(b_.longTy(), b_.bytePtr(row, offsetof(sonde_marker_site, load_bias)),
                       "load.bias");
}

llvm::Value *IrGenerator::markerArgument(const ArgSpec &arg, const Token &tok) {
  using namespace probes::marker;
  llvm::Value *raw = nullptr;
  auto symbolAddress = [&](const std::string &symbol,
                           const std::optional<uint64_t> &address) -> llvm::Value * {
    if (symbol.empty())
      return b_.constLong(0);
    if (!address) {
      fail("marker argument '" + arg.text + "' names symbol '" + symbol +
               "', which the object's symbol tables do not define",
           tok);
      return b_.constLong(0);
    }
    return b_.CreateAdd(b_.constLong(static_cast<int64_t>(*address)), markerLoadBias());
  };
  if (auto *r = std::get_if<RegisterOperand>(&arg.operand)) {
    raw = markerRegister(r->reg);
    if (r->reg.high8)
      raw = b_.CreateLShr(raw, 8);
  } else if (auto *imm = std::get_if<ImmediateOperand>(&arg.operand)) {
    raw = b_.CreateAdd(b_.constLong(imm->value), symbolAddress(imm->symbol, imm->symbolAddress));
  } else {
    const auto &mem = std::get<MemoryOperand>(arg.operand);
    llvm::Value *addr = b_.constLong(mem.displacement);
    if (mem.ripRelative && mem.symbol.empty()) {
      // No symbol: relative to the marker itself (the NOP's link-time address).
      addr = b_.CreateAdd(addr,
                          b_.constLong(static_cast<int64_t>(probe_->probe->markerSite->site.pc)));
      addr = b_.CreateAdd(addr, markerLoadBias());
    } else {
      addr = b_.CreateAdd(addr, symbolAddress(mem.symbol, mem.symbolAddress));
    }
    if (mem.base && !mem.ripRelative)
      addr = b_.CreateAdd(addr, markerRegister(*mem.base));
    if (mem.index)
      addr = b_.CreateAdd(addr, b_.CreateMul(markerRegister(*mem.index),
                                             b_.constLong(static_cast<int64_t>(mem.scale))));
    // The operand is the target's own memory, valid at the marker: a plain load.
    llvm::Type *ty = b_.getIntNTy(arg.size * 8);
    llvm::LoadInst *load = b_.CreateLoad(ty, b_.CreateIntToPtr(addr, b_.ptrTy()), "arg.mem");
    load->setAlignment(llvm::Align(1));
    load->setVolatile(true);
    raw = load;
  }
  llvm::Type *narrow = b_.getIntNTy(arg.size * 8);
  llvm::Value *v = raw->getType() == narrow ? raw : b_.CreateTrunc(raw, narrow);
  if (arg.size == 8)
    return v;
  return arg.isSigned ? b_.CreateSExt(v, b_.longTy()) : b_.CreateZExt(v, b_.longTy());
}

void IrGenerator::visit(ast::TargetSymbol &e) {
  const probes::marker::CatalogSite *site =
      probe_ && probe_->probe ? probe_->probe->markerSite.get() : nullptr;
  if (!e.resolved && (e.inDeadBranch || e.skippedBadvar)) {
    // Never runs (a @defined condition rules the branch out), or --skip-badvars
    // reads the variable as 0; pass 2 decided.
    result_ = {b_.constLong(0), ast::Type::Long};
    return;
  }
  if (probe_ && probe_->probe && probe_->probe->tracepoint && e.resolved) {
    tracepointVariable(*probe_->probe->tracepoint, e);
    return;
  }
  if (!site || !e.resolved) {
    fail("target variables are not supported by this build yet", e.tok);
    return;
  }
  if (e.addressOf || !e.components.empty() || e.prettyDepth > 0) {
    fail("marker arguments are plain integers: '&', '->', '[]' and pretty printing do not "
         "apply to " +
             e.name,
         e.tok);
    return;
  }
  if (e.name == "$$name") {
    result_ = {stringLiteral(site->site.name), ast::Type::String};
    return;
  }
  if (e.name == "$$provider") {
    result_ = {stringLiteral(site->site.provider), ast::Type::String};
    return;
  }
  if (e.name == "$$parms" || e.name == "$$vars") {
    // stap's rendering for markers: "$arg1=0x2a $arg2=0x0".
    std::string format;
    for (size_t i = 0; i < site->site.args.size(); ++i)
      format += (i ? " $arg" : "$arg") + std::to_string(i + 1) + "=%#x";
    llvm::Value *out = stringTemp();
    b_.CreateStore(b_.getInt8(0), out);
    if (format.empty()) {
      result_ = {out, ast::Type::String};
      return;
    }
    auto *type = llvm::ArrayType::get(b_.longTy(), site->site.args.size());
    llvm::Value *args = b_.entryAlloca(type, "parms");
    for (size_t i = 0; i < site->site.args.size(); ++i)
      b_.CreateStore(markerArgument(site->site.args[i], e.tok),
                     b_.CreateConstInBoundsGEP2_64(type, args, 0, i));
    b_.CreateCall(
        SONDE_RT(b_, sonde_out_sprintf),
        {fs_.ctx, b_.constU32(tables_.format(format, "")), args, out, b_.constU32(loc(e.tok))});
    branchOnError();
    result_ = {out, ast::Type::String};
    return;
  }
  size_t n = std::stoul(e.name.substr(4));
  result_ = {markerArgument(site->site.args[n - 1], e.tok), ast::Type::Long};
}

void IrGenerator::visit(ast::CastOp &e) { fail("@cast is not supported by this build yet", e.tok); }
void IrGenerator::visit(ast::AtVar &e) { fail("@var is not supported by this build yet", e.tok); }

// @defined(e) is settled per probe: 1 when every context variable in e resolved
// for this probe's point (a marker's $argN within its argument count), else 0.
void IrGenerator::visit(ast::DefinedOp &e) {
  ContextUse use;
  if (e.operand)
    e.operand->accept(use);
  bool defined = !use.found || (use.allResolved && probe_ && probe_->info.hasContext);
  result_ = {b_.constLong(defined ? 1 : 0), ast::Type::Long};
}

} // namespace sonde::codegen
