// The print family (language.md §5). Formats are checked here with the runtime's
// own parser and referenced by index; the text is produced by the runtime.
#include "codegen/IrGenerator.h"

#include "runtime/format/FormatAbi.h"
#include "runtime/session/TraceSchema.h"

namespace sonde::codegen {

namespace {

// stap's limit on the arguments of one print-family call.
constexpr size_t kMaxPrintArguments = 32;

bool delimited(ast::PrintKind k) {
  using K = ast::PrintKind;
  return k == K::Printd || k == K::Printdln || k == K::Sprintd || k == K::Sprintdln;
}

bool endsLine(ast::PrintKind k) {
  using K = ast::PrintKind;
  return k == K::Println || k == K::Printdln || k == K::Sprintln || k == K::Sprintdln;
}

// Bit i set when argument i is a string (the record carries its bytes).
uint64_t stringArguments(const ast::PrintFormat &p) {
  uint64_t strings = 0;
  for (size_t i = 0; i < p.args.size() && i < 64; ++i)
    if (p.args[i]->type == ast::Type::String)
      strings |= uint64_t{1} << i;
  return strings;
}

} // namespace

// SondeFormatArg[] for a printf/sprintf, after checking the format consumes
// exactly the arguments given. Null (error reported) when it does not.
namespace {

// printf arguments that are a call of the gettimeofday_ns() built-in, each used
// by a numeric conversion: a record transport sends the record's own timestamp
// for them (ModuleAbi.h format_time_args).
uint64_t timeArguments(const ast::PrintFormat &p, const std::vector<SondeFormatItem> &items) {
  std::vector<bool> numeric;
  for (const SondeFormatItem &item : items) {
    if (item.conv == SONDE_CONV_LITERAL || item.conv == SONDE_CONV_PERCENT)
      continue;
    if (item.width_kind == SONDE_SIZE_STAR)
      numeric.push_back(false);
    if (item.precision_kind == SONDE_SIZE_STAR)
      numeric.push_back(false);
    numeric.push_back(item.conv != SONDE_CONV_STRING && item.conv != SONDE_CONV_MEMORY &&
                      item.conv != SONDE_CONV_MEMORY_HEX && item.conv != SONDE_CONV_CHAR);
  }
  uint64_t mask = 0;
  for (size_t i = 0; i < p.args.size() && i < 64 && i < numeric.size(); ++i) {
    auto *call = dynamic_cast<const ast::FunctionCall *>(p.args[i].get());
    if (numeric[i] && call && call->name == "gettimeofday_ns" && call->args.empty() &&
        call->callees.empty())
      mask |= uint64_t{1} << i;
  }
  return mask;
}

// How the arguments travel when the format goes as a binary record (the
// consumer's TraceSchema decides the same from the same text), or nothing.
std::optional<std::vector<uint8_t>> recordKinds(const std::vector<SondeFormatItem> &items,
                                                uint64_t timeArgs) {
  SondeFormatSpec spec{};
  spec.items = items.data();
  spec.item_count = static_cast<uint32_t>(items.size());
  std::vector<uint8_t> kinds;
  if (!session::recordArgKinds(spec, timeArgs, kinds))
    return std::nullopt;
  return kinds;
}

} // namespace

std::optional<std::vector<SondeFormatItem>> IrGenerator::checkedFormat(ast::PrintFormat &p) {
  size_t count = 0, errorOffset = 0;
  SondeFormatParseStatus st =
      sonde_format_parse(p.format.data(), p.format.size(), nullptr, 0, &count, &errorOffset);
  if (st != SONDE_FORMAT_PARSED) {
    fail(sonde_format_parse_message(st), p.tok);
    return std::nullopt;
  }
  std::vector<SondeFormatItem> items(count);
  sonde_format_parse(p.format.data(), p.format.size(), items.data(), items.size(), &count,
                     &errorOffset);
  if (sonde_format_arg_count(items.data(), items.size()) != p.args.size()) {
    fail("Wrong number of args to formatted print operator", p.tok);
    return std::nullopt;
  }
  return items;
}

llvm::Value *IrGenerator::formatArgs(ast::PrintFormat &p, uint64_t *timeArgs) {
  std::optional<std::vector<SondeFormatItem>> checked = checkedFormat(p);
  if (!checked)
    return nullptr;
  const std::vector<SondeFormatItem> &items = *checked;
  uint64_t time = timeArgs ? timeArguments(p, items) : 0;
  if (timeArgs)
    *timeArgs = time;
  return argumentArray(p, time);
}

// The arguments as 8-byte slots, strings as pointers; those read from the
// record's timestamp are left zero.
llvm::Value *IrGenerator::argumentArray(ast::PrintFormat &p, uint64_t timeArgs) {
  auto *type = llvm::ArrayType::get(b_.longTy(), std::max<size_t>(p.args.size(), 1));
  llvm::Value *args = statementArray(type, "fmtargs");
  for (size_t i = 0; i < p.args.size(); ++i) {
    bool fromRecordTime = i < 64 && (timeArgs >> i & 1);
    b_.CreateStore(fromRecordTime ? b_.constLong(0) : eval(*p.args[i]).v,
                   b_.CreateConstInBoundsGEP2_64(type, args, 0, i));
  }
  return args;
}

// SondeValue[] of the arguments of print/println/printd/printdln and sprint*.
llvm::Value *IrGenerator::printValues(ast::PrintFormat &p) {
  size_t n = p.args.size();
  auto *valueTy = llvm::ArrayType::get(b_.longTy(), sizeof(SondeValue) / 8);
  auto *type = llvm::ArrayType::get(valueTy, std::max<size_t>(n, 1));
  llvm::Value *values = statementArray(type, "values");
  for (size_t i = 0; i < n; ++i) {
    Value v = eval(*p.args[i]);
    llvm::Value *elem = b_.CreateConstInBoundsGEP2_64(type, values, 0, i);
    bool isString = v.type == ast::Type::String;
    b_.CreateStore(b_.getInt32(isString ? SONDE_VALUE_STRING : SONDE_VALUE_LONG),
                   b_.bytePtr(elem, offsetof(SondeValue, kind)));
    b_.CreateStore(isString ? b_.constLong(0) : v.v, b_.bytePtr(elem, offsetof(SondeValue, i)));
    b_.CreateStore(isString ? v.v : llvm::ConstantPointerNull::get(b_.ptrTy()),
                   b_.bytePtr(elem, offsetof(SondeValue, s)));
  }
  return values;
}

// Kernel probes cannot format: print, println, printd, printdln and print_char
// become the printf record they are equivalent to, formatted by the consumer.
void IrGenerator::printAsRecord(ast::PrintFormat &p) {
  std::string format;
  for (size_t i = 0; i < p.args.size(); ++i) {
    if (i > 0 && delimited(p.kind))
      for (char c : p.format)
        format += c == '%' ? std::string("%%") : std::string(1, c);
    if (p.kind == ast::PrintKind::PrintChar)
      format += "%c";
    else
      format += p.args[i]->type == ast::Type::String ? "%s" : "%d";
  }
  if (endsLine(p.kind))
    format += '\n';
  CodegenTarget::PrintfCall call;
  call.args = argumentArray(p, 0);
  call.format = tables_.format(format, formatSource(), 0);
  call.argCount = static_cast<uint32_t>(p.args.size());
  call.stringMask = stringArguments(p);
  call.loc = loc(p.tok);
  target_.emitPrintf(b_, fs_.ctx, call);
  branchOnError();
}

void IrGenerator::printHistogram(ast::PrintFormat &p) {
  ast::Expr &operand = *p.hist->operand;
  if (const StatsBinding *binding = statsBindingOf(operand)) {
    target_.emitPrintHistogram(b_, fs_.ctx, globalHeader(*binding->loop->base->global),
                               currentKeys(*binding), loc(p.tok));
  } else if (auto *a = dynamic_cast<ast::ArrayIndex *>(&operand); a && a->base) {
    const GlobalSlot *slot = slotOf(a->base->global, a->tok);
    if (!slot)
      return;
    llvm::Value *keys = evalKeys(*slot, a->indexes, nullptr, a->tok);
    target_.emitPrintHistogram(b_, fs_.ctx, globalHeader(*a->base->global), keys, loc(p.tok));
  } else if (auto *s = dynamic_cast<ast::Symbol *>(&operand); s && slotOf(s->global, s->tok)) {
    target_.emitPrintHistogram(b_, fs_.ctx, globalHeader(*s->global), nullptr, loc(p.tok));
  } else {
    return;
  }
  branchOnError();
}

void IrGenerator::sprintHistogram(ast::PrintFormat &p, llvm::Value *out) {
  ast::Expr &operand = *p.hist->operand;
  llvm::Value *where = b_.constU32(loc(p.tok));
  if (const StatsBinding *binding = statsBindingOf(operand)) {
    b_.CreateCall(
        SONDE_RT(b_, sonde_out_shist_map),
        {fs_.ctx, globalHeader(*binding->loop->base->global), currentKeys(*binding), out, where});
  } else if (auto *a = dynamic_cast<ast::ArrayIndex *>(&operand); a && a->base) {
    const GlobalSlot *slot = slotOf(a->base->global, a->tok);
    if (!slot)
      return;
    llvm::Value *keys = evalKeys(*slot, a->indexes, nullptr, a->tok);
    b_.CreateCall(SONDE_RT(b_, sonde_out_shist_map),
                  {fs_.ctx, globalHeader(*a->base->global), keys, out, where});
  } else if (auto *s = dynamic_cast<ast::Symbol *>(&operand); s && slotOf(s->global, s->tok)) {
    b_.CreateCall(SONDE_RT(b_, sonde_out_shist_stats),
                  {fs_.ctx, globalHeader(*s->global), out, where});
  } else {
    return;
  }
  branchOnError();
}

void IrGenerator::visit(ast::PrintFormat &p) {
  // stap's limit (PR10750): the arguments are an array on the handler's stack,
  // in a traced process or a BPF program; many thousands also made LLVM's
  // compile time quadratic.
  if (p.args.size() > kMaxPrintArguments) {
    fail("too many arguments to print (" + std::to_string(p.args.size()) + ")", p.tok);
    result_ = {};
    return;
  }
  if (ast::printKindReturnsString(p.kind)) {
    llvm::Value *text = sprint(p);
    result_ = {text, ast::Type::String};
  } else {
    print(p);
    result_ = {b_.constLong(0), ast::Type::Long};
  }
}

std::string IrGenerator::formatSource() const {
  if (probe_)
    return probe_->info.pp;
  return fs_.decl ? "function " + fs_.decl->name : std::string();
}

// The forms that write to the output (they have no value).
void IrGenerator::print(ast::PrintFormat &p) {
  using K = ast::PrintKind;
  switch (p.kind) {
  case K::Printf: {
    std::optional<std::vector<SondeFormatItem>> items = checkedFormat(p);
    if (!items)
      return;
    CodegenTarget::PrintfCall call;
    uint64_t timeArgs = target_.inKernel() ? 0 : timeArguments(p, *items);
    call.args = argumentArray(p, timeArgs);
    call.format = tables_.format(p.format, formatSource(), timeArgs);
    call.argCount = static_cast<uint32_t>(p.args.size());
    call.stringMask = stringArguments(p);
    call.recordKinds = recordKinds(*items, timeArgs);
    call.loc = loc(p.tok);
    target_.emitPrintf(b_, fs_.ctx, call);
    branchOnError();
    return;
  }
  case K::PrintChar:
    if (target_.inKernel())
      printAsRecord(p);
    else
      target_.emitPrintChar(b_, fs_.ctx, evalLong(*p.args.at(0)));
    return;
  case K::Print:
  case K::Println:
  case K::Printd:
  case K::Printdln:
    if (target_.inKernel() && !p.hist) {
      printAsRecord(p);
      return;
    }
    if (p.hist) {
      printHistogram(p);
      if (endsLine(p.kind))
        target_.emitPrintValues(b_, fs_.ctx, llvm::ConstantPointerNull::get(b_.ptrTy()), 0, nullptr,
                                true);
      return;
    }
    target_.emitPrintValues(b_, fs_.ctx, printValues(p), static_cast<uint32_t>(p.args.size()),
                            delimited(p.kind) ? stringLiteral(p.format) : nullptr,
                            endsLine(p.kind));
    return;
  default: return;
  }
}

// The forms that produce a string: a temporary holding the text.
llvm::Value *IrGenerator::sprint(ast::PrintFormat &p) {
  llvm::Value *out = stringTemp();
  if (p.kind == ast::PrintKind::Sprintf) {
    b_.CreateStore(b_.getInt8(0), out);
    if (target_.inKernel()) {
      sprintfByAppends(p, out);
      return out;
    }
    if (llvm::Value *args = formatArgs(p)) {
      b_.CreateCall(
          SONDE_RT(b_, sonde_out_sprintf),
          {fs_.ctx, b_.constU32(tables_.format(p.format, "")), args, out, b_.constU32(loc(p.tok))});
      branchOnError();
    }
    return out;
  }
  if (p.hist) {
    sprintHistogram(p, out);
    if (endsLine(p.kind))
      target_.appendString(b_, out, stringLiteral("\n"), strCap_);
    return out;
  }
  if (target_.inKernel()) {
    sprintValuesByAppends(p, delimited(p.kind), endsLine(p.kind), out);
    return out;
  }
  llvm::Value *delimiter =
      delimited(p.kind) ? stringLiteral(p.format)
                        : static_cast<llvm::Value *>(llvm::ConstantPointerNull::get(b_.ptrTy()));
  llvm::Value *values = printValues(p);
  b_.CreateCall(SONDE_RT(b_, sonde_sprint_values),
                {values, b_.getInt64(p.args.size()), delimiter,
                 b_.getInt32(endsLine(p.kind) ? 1 : 0), out, b_.getInt64(strCap_)});
  return out;
}

} // namespace sonde::codegen
