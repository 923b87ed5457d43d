// `$name` in kernel.trace probes: a field of the tracepoint's record (the
// tracefs format), read in a tracepoint program; or, when the probe names the
// tracepoint's C arguments (`$prev->pid`, stap's form), those arguments in a
// raw tracepoint program and the kernel memory they point to, at offsets the
// kernel's BTF gives (probes/tracepoint/KernelBtf). One probe reads one or the
// other: the two are different programs.
#include "codegen/IrGenerator.h"

#include "probes/tracepoint/KernelBtf.h"
#include "probes/tracepoint/TracepointFormat.h"
#include "runtime/bpf/BpfAbi.h"

namespace sonde::codegen {

namespace {

// Whether a probe names something only the C arguments have: `->`, `[]`, `&`,
// or a name that is not a field of the record.
class ArgumentUse : public ast::RecursiveVisitor {
public:
  using RecursiveVisitor::visit;
  explicit ArgumentUse(const probes::tracepoint::TracepointFormat &format) : format_(format) {}
  bool found = false;
  void visit(ast::TargetSymbol &e) override {
    RecursiveVisitor::visit(e);
    if (e.resolved && (!e.components.empty() || e.addressOf ||
                       !probes::tracepoint::findTracepointField(format_, e.name.substr(1))))
      found = true;
  }

private:
  const probes::tracepoint::TracepointFormat &format_;
};

} // namespace

bool IrGenerator::readsTracepointArguments(const ast::DerivedProbe &p) {
  if (!p.tracepoint)
    return false;
  ArgumentUse use(p.tracepoint->format);
  p.body->accept(use);
  if (p.condition)
    p.condition->accept(use);
  return use.found;
}

void IrGenerator::tracepointVariable(const probes::tracepoint::ResolvedTracepoint &tp,
                                     ast::TargetSymbol &e) {
  if (e.prettyDepth > 0) {
    fail("pretty printing of tracepoint variables ('" + e.name + "$') is not supported", e.tok);
    return;
  }
  if (readsArguments_)
    tracepointArgument(tp, e);
  else
    tracepointField(tp.format, e);
}

// $name: args[i] of the raw tracepoint, then the memory it points to.
void IrGenerator::tracepointArgument(const probes::tracepoint::ResolvedTracepoint &tp,
                                     ast::TargetSymbol &e) {
  using probes::tracepoint::BtfAccess;
  std::string why;
  const probes::tracepoint::KernelBtf *btf = probes::tracepoint::KernelBtf::running(&why);
  std::optional<BtfAccess> a = btf ? btf->resolve(tp.event, e, &why) : std::nullopt;
  if (!a) {
    if (probes::tracepoint::findTracepointField(tp.format, e.name.substr(1)))
      why = "'" + e.name +
            "' is a field of the tracepoint's record, and this probe reads its C "
            "arguments ('->', '[]', '&' or an argument's name): one probe cannot read both";
    fail(why, e.tok);
    return;
  }
  llvm::Value *where = b_.constU32(loc(e.tok));
  llvm::Value *v = b_.CreateCall(
      SONDE_RT(b_, sonde_bpf_field_long),
      {fs_.ctx, b_.constU32(8 * a->argIndex), b_.constU32(8), b_.getInt32(0)}, e.name);
  if (!a->readsMemory) {
    if (a->argSize < 8) {
      llvm::Value *narrow = b_.CreateTrunc(v, b_.getIntNTy(a->argSize * 8));
      v = a->argSigned ? b_.CreateSExt(narrow, b_.longTy()) : b_.CreateZExt(narrow, b_.longTy());
    }
    result_ = {v, ast::Type::Long};
    return;
  }
  for (uint32_t hop : a->pointerHops) {
    v = b_.CreateCall(
        SONDE_RT(b_, sonde_bpf_kernel_value),
        {fs_.ctx, b_.CreateAdd(v, b_.constLong(hop)), b_.constU32(8), b_.getInt32(0), where});
    branchOnError();
  }
  llvm::Value *addr = b_.CreateAdd(v, b_.constLong(a->finalOffset));
  switch (a->result) {
  case BtfAccess::Result::Address: result_ = {addr, ast::Type::Long}; return;
  case BtfAccess::Result::Value:
    result_ = {b_.CreateCall(
                   SONDE_RT(b_, sonde_bpf_kernel_value),
                   {fs_.ctx, addr, b_.constU32(a->size), b_.getInt32(a->isSigned ? 1 : 0), where}),
               ast::Type::Long};
    branchOnError();
    return;
  case BtfAccess::Result::String: {
    llvm::Value *out = stringTemp();
    b_.CreateCall(SONDE_RT(b_, sonde_bpf_kernel_chars),
                  {fs_.ctx, out, addr, b_.constU32(a->length), where});
    branchOnError();
    result_ = {out, ast::Type::String};
    return;
  }
  }
}

// $field of a kernel tracepoint: read from the tracepoint's record.
void IrGenerator::tracepointField(const probes::tracepoint::TracepointFormat &format,
                                  ast::TargetSymbol &e) {
  using probes::tracepoint::TracepointFieldKind;
  const probes::tracepoint::TracepointField *field =
      probes::tracepoint::findTracepointField(format, std::string_view(e.name).substr(1));
  if (!field) {
    fail("unable to find tracepoint variable '" + e.name + "'", e.tok);
    return;
  }
  switch (field->kind) {
  case TracepointFieldKind::Integer:
  case TracepointFieldKind::Pointer:
    result_ = {b_.CreateCall(SONDE_RT(b_, sonde_bpf_field_long),
                             {fs_.ctx, b_.constU32(field->offset), b_.constU32(field->size),
                              b_.getInt32(field->isSigned ? 1 : 0)},
                             e.name),
               ast::Type::Long};
    return;
  case TracepointFieldKind::CharArray:
  case TracepointFieldKind::DynamicString: {
    llvm::Value *out = stringTemp();
    bool dynamic = field->kind == TracepointFieldKind::DynamicString;
    bool rel = field->type.find("__rel_loc") != std::string::npos;
    b_.CreateCall(SONDE_RT(b_, sonde_bpf_field_string),
                  {fs_.ctx, out, b_.constU32(field->offset),
                   b_.constU32(dynamic ? 0 : std::max<uint32_t>(field->count, 1)),
                   b_.getInt32(rel ? 1 : 0)});
    result_ = {out, ast::Type::String};
    return;
  }
  default:
    fail("tracepoint field '" + field->name + "' has type '" + field->type +
             "', which cannot be read as a value",
         e.tok);
  }
}

} // namespace sonde::codegen
