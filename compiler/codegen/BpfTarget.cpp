#include "codegen/BpfTarget.h"
#include "codegen/BpfPrograms.h"

#include "codegen/RuntimeBuilder.h"
#include "codegen/ScriptFacts.h"
#include "probes/tracepoint/KernelBtf.h"
#include "runtime/bpf/BpfAbi.h"

#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/IR/DIBuilder.h>
#include <llvm/IR/DebugInfo.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/Linker/Linker.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Target/TargetMachine.h>

#include <algorithm>
#include <bit>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>

extern "C" const char sonde_bpf_runtime_bitcode[];
extern "C" const uint64_t sonde_bpf_runtime_bitcode_size;

namespace sonde::codegen {

namespace {

constexpr const char *kTriple = "bpfel";
constexpr const char *kGlobals = "sonde_globals";

// What a script says when it uses a runtime entry point kernel probes lack.
std::string constructOf(llvm::StringRef fn) {
  static const std::map<std::string, std::string, std::less<>> names = {
      {"sonde_map_clear", "deleting a whole array"},
      {"sonde_stats_clear", "deleting an aggregate"},
      {"sonde_map_delete_wild", "delete with '*' keys"},
      {"sonde_map_exists_wild", "'in' with '*' keys"},
      {"sonde_regex_match", "regular expression matching"},
  };
  if (auto it = names.find(fn); it != names.end())
    return it->second;
  if (fn.starts_with("sonde_foreach_"))
    return "foreach";
  if (fn.starts_with("sonde_stats_") || fn.starts_with("sonde_map_stats_") ||
      fn.starts_with("sonde_iter_"))
    return "reading an aggregate (read it in an end or timer probe)";
  return "'" + fn.str() + "'";
}

class BpfTargetImpl final : public BpfTarget {
public:
  BpfTargetImpl(std::unique_ptr<llvm::TargetMachine> tm, const bpf::KernelStateShape &shape,
                int64_t kernelHz)
      : tm_(std::move(tm)), shape_(shape), kernelHz_(kernelHz) {}

  void prepareModule(llvm::Module &m) override {
    m.setTargetTriple(kTriple);
    m.setDataLayout(tm_->createDataLayout());
    llvm::LLVMContext &c = m.getContext();
    auto buffer = llvm::MemoryBuffer::getMemBuffer(
        llvm::StringRef(sonde_bpf_runtime_bitcode, sonde_bpf_runtime_bitcode_size), "BpfRuntime",
        false);
    auto parsed = llvm::parseBitcodeFile(buffer->getMemBufferRef(), c);
    if (!parsed) {
      llvm::consumeError(parsed.takeError());
      return; // finish() reports the missing runtime
    }
    runtime_ = std::move(*parsed);
    for (llvm::Function &f : *runtime_)
      if (!f.isDeclaration())
        provided_.insert(f.getName().str());
    auto *bytes = llvm::ArrayType::get(llvm::Type::getInt8Ty(c),
                                       SONDE_BPF_CONTROL_BYTES + shape_.scalarBytes);
    globals_ = new llvm::GlobalVariable(m, bytes, false, llvm::GlobalValue::ExternalLinkage,
                                        llvm::ConstantAggregateZero::get(bytes), kGlobals);
    globals_->setSection(".bss");
    globals_->setAlignment(llvm::Align(8));
  }

  llvm::TargetMachine &machine() override { return *tm_; }
  bool inKernel() const override { return true; }

  llvm::FunctionCallee runtimeFunction(llvm::Module &m, llvm::StringRef name,
                                       llvm::FunctionType *type) override {
    if (!provided_.count(name.str()) && unsupported_.empty())
      unsupported_ = constructOf(name);
    return m.getOrInsertFunction(name, type);
  }
  bool providesBuiltin(const std::string &symbol) override { return provided_.count(symbol) != 0; }
  std::string builtinRefusal(const std::string &name) const override {
    if (name == "get_cycles")
      return "BPF has no helper that reads the cycle counter (use local_clock_ns() or "
             "ktime_get_ns())";
    if (name == "matched" || name == "matched_str" || name == "ngroups")
      return "regular expressions run in sonde, not in kernel probes (call it in an end or "
             "timer probe)";
    if (name == "user_buffer_quoted")
      return "it escapes the NUL bytes of a buffer, which the kernel runtime's quoting does not "
             "(use user_string_n_quoted(addr, len) for text)";
    if (name == "pid2execname")
      return "a tracepoint program cannot look up another task by pid (call it in an end or "
             "timer probe)";
    return {};
  }
  std::string takeUnsupported() override { return std::exchange(unsupported_, {}); }

  // Strings live in scratch, after the context, the key and the value areas.
  // Handlers never run nested on one CPU, so each handler's buffers start at
  // the same place; a script function's buffers have their own place below
  // that (a function's callers' buffers stay live while it runs). Handler
  // buffers are addressed from `sonde_cfg_handler_strings`, fixed in finish()
  // once every function's buffers are known.
  llvm::Value *newStringBuffer(RuntimeBuilder &b, uint32_t cap) override {
    // Computed in the entry block: a statement's buffer is reused by later ones.
    llvm::Function *f = b.GetInsertBlock()->getParent();
    uint64_t bytes = (cap + 7) & ~7u;
    llvm::IRBuilder<> entry(&f->getEntryBlock(), f->getEntryBlock().begin());
    if (!f->getName().starts_with("probe.")) {
      uint64_t offset = stringsStart() + functionStringBytes_;
      functionStringBytes_ += bytes;
      return entry.CreateConstInBoundsGEP1_64(entry.getInt8Ty(), f->getArg(0), offset, "str");
    }
    uint64_t &used = handlerStringBytes_[f];
    uint64_t offset = used;
    used += bytes;
    maxHandlerStringBytes_ = std::max(maxHandlerStringBytes_, used);
    auto *base = b.module().getOrInsertGlobal("sonde_cfg_handler_strings", entry.getInt32Ty());
    llvm::Value *at = entry.CreateAdd(
        entry.CreateZExt(entry.CreateLoad(entry.getInt32Ty(), base), entry.getInt64Ty()),
        entry.getInt64(offset));
    return entry.CreateInBoundsGEP(entry.getInt8Ty(), f->getArg(0), at, "str");
  }
  llvm::Constant *stringConstant(RuntimeBuilder &b, llvm::StringRef text) override {
    llvm::Constant *&c = strings_[text.str()];
    if (!c) {
      auto *g = b.CreateGlobalString(text, ".str", 0, &b.module());
      g->setSection(".rodata");
      g->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::None);
      c = g;
    }
    return c;
  }
  void copyString(RuntimeBuilder &b, llvm::Value *dst, llvm::Value *src, uint32_t cap) override {
    b.CreateCall(SONDE_RT(b, sonde_bpf_strcpy), {dst, src, b.constU32(cap)});
  }
  void appendString(RuntimeBuilder &b, llvm::Value *dst, llvm::Value *src, uint32_t cap) override {
    b.CreateCall(SONDE_RT(b, sonde_bpf_strcat), {dst, src, b.constU32(cap)});
  }
  llvm::Value *compareStrings(RuntimeBuilder &b, llvm::Value *lhs, llvm::Value *rhs) override {
    return b.CreateCall(SONDE_RT(b, sonde_bpf_strcmp), {lhs, rhs, b.constU32(shape_.strCap)},
                        "cmp");
  }

  llvm::Value *stateBase(RuntimeBuilder &, llvm::Value *) override { return globals_; }
  llvm::Value *globalData(RuntimeBuilder &b, llvm::Value *, const GlobalSlot &slot) override {
    int64_t offset = shape_.scalarOffset.at(slot.layoutIndex);
    return b.bytePtr(globals_, SONDE_BPF_CONTROL_BYTES + static_cast<uint64_t>(offset),
                     slot.desc->name);
  }
  // An array or stats global's header is its descriptor (BpfAbi.h), in .rodata.
  llvm::Value *globalHeader(RuntimeBuilder &b, llvm::Value *, const GlobalSlot &slot) override {
    llvm::GlobalVariable *&g = descriptors_[slot.layoutIndex];
    if (g)
      return g;
    const values::GlobalDesc &d = *slot.desc;
    uint32_t strings = 0;
    for (uint32_t c = 0; c < d.keyCount && c < d.keys.size(); ++c)
      if (d.keys[c] == values::KeyKind::String)
        strings |= 1u << c;
    uint32_t buckets = d.hist == values::HistKind::Log ? 128
                       : d.hist == values::HistKind::Linear
                           ? static_cast<uint32_t>((d.histHigh - d.histLow) / d.histWidth + 3)
                           : 0;
    auto *i32 = b.getInt32Ty();
    auto *i64 = b.getInt64Ty();
    auto *type =
        llvm::StructType::get(b.getContext(), {i32, i32, i32, i32, i32, i32, i64, i64, i32, i32});
    static_assert(sizeof(sonde_bpf_global) == 6 * 4 + 2 * 8 + 2 * 4);
    auto *init = llvm::ConstantStruct::get(
        type,
        {b.getInt32(slot.layoutIndex), b.getInt32(d.keyCount), b.getInt32(strings),
         b.getInt32(static_cast<uint32_t>(d.value)), b.getInt32(static_cast<uint32_t>(d.hist)),
         b.getInt32(buckets), b.getInt64(static_cast<uint64_t>(d.histLow)),
         b.getInt64(static_cast<uint64_t>(d.histWidth)), b.getInt32(d.varianceShift),
         b.getInt32(d.usesVariance ? 1 : 0)});
    g = new llvm::GlobalVariable(b.module(), type, true, llvm::GlobalValue::PrivateLinkage, init,
                                 "global." + d.name);
    g->setSection(".rodata");
    return g;
  }

  void emitPrintf(RuntimeBuilder &b, llvm::Value *ctx, const PrintfCall &call) override {
    uint64_t bytes = sizeof(sonde_bpf_record);
    for (uint32_t i = 0; i < call.argCount; ++i)
      bytes += (call.stringMask >> i & 1) ? ((shape_.strCap + 2 + 7) & ~7u) : 8;
    recordBytes_ = std::max(recordBytes_, bytes);
    b.CreateCall(SONDE_RT(b, sonde_bpf_printf),
                 {ctx, b.constU32(call.format), call.args, b.constU32(call.argCount),
                  b.getInt64(call.stringMask)});
  }
  void emitPrintValues(RuntimeBuilder &, llvm::Value *, llvm::Value *, uint32_t, llvm::Value *,
                       bool) override {
    refuse("print, println, printd and printdln (use printf)");
  }
  void emitPrintChar(RuntimeBuilder &, llvm::Value *, llvm::Value *) override {
    refuse("print_char");
  }
  void emitPrintHistogram(RuntimeBuilder &, llvm::Value *, llvm::Value *, llvm::Value *,
                          uint32_t) override {
    refuse("printing a histogram (print it in an end or timer probe)");
  }

  bool finish(llvm::Module &m, const std::vector<Entry> &entries,
              const std::vector<uint32_t> &globals, int64_t maxAction, FinishError *error) override;

  bool emitObject(llvm::Module &m, const std::string &objectPath, std::string *error) override {
    return writeObjectFile(*tm_, m, objectPath, "BPF", error);
  }
  // A BPF object is loaded as it is: libbpf does the relocations.
  bool link(const std::string &objectPath, const std::string &modulePath,
            std::string *error) override {
    std::error_code ec;
    std::filesystem::rename(objectPath, modulePath, ec);
    if (ec)
      *error = "cannot write '" + modulePath + "': " + ec.message();
    return !ec;
  }
  const char *moduleFileName() const override { return "kernel.bpf.o"; }

private:
  uint64_t stringsStart() const {
    return SONDE_BPF_CONTEXT_BYTES + shape_.keyBytes + shape_.valueBytes;
  }
  void refuse(const std::string &construct) {
    if (unsupported_.empty())
      unsupported_ = construct;
  }
  void defineConstant(llvm::Module &m, const char *name, uint64_t value);
  bool defineTaskOffsets(llvm::Module &m, std::string *error);
  void defineProbeNames(llvm::Module &m, const std::vector<Entry> &entries);
  void emitEntry(llvm::Module &m, const Entry &e, int64_t maxAction);

  std::unique_ptr<llvm::TargetMachine> tm_;
  bpf::KernelStateShape shape_;
  int64_t kernelHz_;
  std::unique_ptr<llvm::Module> runtime_;
  std::set<std::string> provided_;
  std::string unsupported_;
  llvm::GlobalVariable *globals_ = nullptr;
  std::map<std::string, llvm::Constant *> strings_;
  std::map<uint32_t, llvm::GlobalVariable *> descriptors_;
  uint64_t functionStringBytes_ = 0;
  std::map<const llvm::Function *, uint64_t> handlerStringBytes_;
  uint64_t maxHandlerStringBytes_ = 0;
  // An error record may carry error()'s text.
  uint64_t recordBytes_ =
      sizeof(sonde_bpf_record) + sizeof(sonde_bpf_error) + ((shape_.strCap + 2 + 7) & ~7u);
};

void BpfTargetImpl::defineConstant(llvm::Module &m, const char *name, uint64_t value) {
  auto *i32 = llvm::Type::getInt32Ty(m.getContext());
  llvm::GlobalVariable *g = m.getGlobalVariable(name);
  if (!g)
    return; // the runtime does not use it
  g->setInitializer(llvm::ConstantInt::get(i32, value));
  g->setConstant(true);
  g->setLinkage(llvm::GlobalValue::InternalLinkage);
}

// Where the ids built-ins (BpfTask.h) find what they read in this kernel's
// structures: the offsets of its BTF, defined when a script uses one.
bool BpfTargetImpl::defineTaskOffsets(llvm::Module &m, std::string *error) {
  struct Offset {
    const char *constant, *type, *member;
  };
  static const Offset kOffsets[] = {
      {"sonde_cfg_task_real_parent", "task_struct", "real_parent"},
      {"sonde_cfg_task_group_leader", "task_struct", "group_leader"},
      {"sonde_cfg_task_tgid", "task_struct", "tgid"},
      {"sonde_cfg_task_comm", "task_struct", "comm"},
      {"sonde_cfg_task_thread_pid", "task_struct", "thread_pid"},
      {"sonde_cfg_task_signal", "task_struct", "signal"},
      {"sonde_cfg_task_cred", "task_struct", "cred"},
      {"sonde_cfg_signal_pids", "signal_struct", "pids"},
      {"sonde_cfg_pid_level", "pid", "level"},
      {"sonde_cfg_pid_numbers", "pid", "numbers"},
      {"sonde_cfg_upid_ns", "upid", "ns"},
      {"sonde_cfg_cred_uid", "cred", "uid"},
      {"sonde_cfg_cred_gid", "cred", "gid"},
      {"sonde_cfg_cred_euid", "cred", "euid"},
      {"sonde_cfg_cred_egid", "cred", "egid"},
      {"sonde_cfg_cred_user_ns", "cred", "user_ns"},
      {"sonde_cfg_userns_uid_map", "user_namespace", "uid_map"},
      {"sonde_cfg_userns_gid_map", "user_namespace", "gid_map"},
      {"sonde_cfg_idmap_extent", "uid_gid_map", "extent"},
      {"sonde_cfg_idmap_count", "uid_gid_map", "nr_extents"},
      {"sonde_cfg_task_thread_info", "task_struct", "thread_info"},
      {"sonde_cfg_thread_info_status", "thread_info", "status"},
  };
  const probes::tracepoint::KernelBtf *btf = nullptr;
  std::string why;
  for (const Offset &o : kOffsets) {
    if (!m.getGlobalVariable(o.constant))
      continue;
    if (!btf && !(btf = probes::tracepoint::KernelBtf::running(&why))) {
      *error = "the ids built-ins (ppid(), pgrp(), euid(), ns_pid(), pexecname(), ...) in kernel "
               "probes need the kernel's BTF" +
               (why.empty() ? "" : ": " + why);
      return false;
    }
    std::optional<uint32_t> offset = btf->memberOffset(o.type, o.member);
    if (!offset) {
      *error = std::string("the kernel's BTF has no struct ") + o.type + " member " + o.member +
               ", which the ids built-ins in kernel probes read";
      return false;
    }
    defineConstant(m, o.constant, *offset);
  }
  return true;
}

// void sonde_bpf_probe_name(u32 probe, u32 which, char *out), which pp() and
// pn() call (BpfBuiltins.h): the probe's names as constants, by probe index.
void BpfTargetImpl::defineProbeNames(llvm::Module &m, const std::vector<Entry> &entries) {
  if (!m.getFunction("sonde_fn_pp_0") && !m.getFunction("sonde_fn_pn_0"))
    return;
  // The names in one .rodata blob (offset 0: ""), found through a table of
  // offsets by (probe, which): the same small code in every program, where a
  // switch over the probes would put every name into each of them.
  std::string blob(1, '\0');
  uint32_t count = 0;
  for (const Entry &e : entries)
    count = std::max(count, e.probeIndex + 1);
  // A power of two long, so that a masked index stays inside for the verifier.
  std::vector<uint32_t> offsets(std::bit_ceil(2 * static_cast<size_t>(count)), 0);
  for (const Entry &e : entries) {
    offsets[2 * e.probeIndex] = static_cast<uint32_t>(blob.size());
    blob += e.pp + '\0';
    offsets[2 * e.probeIndex + 1] = static_cast<uint32_t>(blob.size());
    blob += e.pn + '\0';
  }
  RuntimeBuilder b(m, *this);
  auto *names = new llvm::GlobalVariable(
      m, llvm::ArrayType::get(b.getInt8Ty(), blob.size()), true, llvm::GlobalValue::PrivateLinkage,
      llvm::ConstantDataArray::getString(m.getContext(), blob, false), "probe_names");
  names->setSection(".rodata");
  auto *offsetsType = llvm::ArrayType::get(b.getInt32Ty(), offsets.size());
  auto *table = new llvm::GlobalVariable(m, offsetsType, true, llvm::GlobalValue::PrivateLinkage,
                                         llvm::ConstantDataArray::get(m.getContext(), offsets),
                                         "probe_name_offsets");
  table->setSection(".rodata");

  auto *type =
      llvm::FunctionType::get(b.getVoidTy(), {b.getInt32Ty(), b.getInt32Ty(), b.ptrTy()}, false);
  auto *fn =
      llvm::Function::Create(type, llvm::GlobalValue::ExternalLinkage, "sonde_bpf_probe_name", m);
  llvm::Value *probe = fn->getArg(0), *which = fn->getArg(1), *out = fn->getArg(2);
  b.SetInsertPoint(llvm::BasicBlock::Create(m.getContext(), "entry", fn));
  llvm::Value *slot =
      b.CreateAnd(b.CreateAdd(b.CreateShl(b.CreateZExt(probe, b.getInt64Ty()), 1),
                              b.CreateZExt(b.CreateICmpNE(which, b.getInt32(0)), b.getInt64Ty())),
                  b.getInt64(offsets.size() - 1));
  llvm::Value *offset =
      b.CreateLoad(b.getInt32Ty(), b.CreateInBoundsGEP(b.getInt32Ty(), table, slot));
  // Bounded for the verifier's pointer arithmetic (the copy reads through a helper).
  uint64_t mask = std::bit_ceil(blob.size()) - 1;
  llvm::Value *at = b.CreateAnd(b.CreateZExt(offset, b.getInt64Ty()), b.getInt64(mask));
  copyString(b, out, b.CreateGEP(b.getInt8Ty(), names, at), shape_.strCap);
  b.CreateRetVoid();
}

// int sonde_probe_N(void *tracepoint) in section tracepoint/SYSTEM/EVENT, or
// raw_tp/EVENT (its context the C arguments) for a probe that reads those.
namespace {

// Whether `handler` or a function it calls reads the kernel stack, which only
// the program's entry can capture (bpf_get_stack needs the program context).
bool readsKernelStack(llvm::Function *handler) {
  static const llvm::StringRef kReaders[] = {"sonde_fn_backtrace_0", "sonde_fn_callers_1",
                                             "sonde_fn_print_backtrace_0",
                                             "sonde_fn_sprint_backtrace_0"};
  std::set<llvm::Function *> seen;
  std::vector<llvm::Function *> work{handler};
  while (!work.empty()) {
    llvm::Function *f = work.back();
    work.pop_back();
    if (!seen.insert(f).second)
      continue;
    if (f->isDeclaration()) {
      if (std::find(std::begin(kReaders), std::end(kReaders), f->getName()) != std::end(kReaders))
        return true;
      continue;
    }
    for (llvm::Instruction &i : llvm::instructions(*f))
      if (auto *call = llvm::dyn_cast<llvm::CallBase>(&i))
        if (llvm::Function *callee = call->getCalledFunction())
          work.push_back(callee);
  }
  return false;
}

} // namespace

void BpfTargetImpl::emitEntry(llvm::Module &m, const Entry &e, int64_t maxAction) {
  RuntimeBuilder b(m, *this);
  auto *type = llvm::FunctionType::get(b.getInt32Ty(), {b.ptrTy()}, false);
  auto *fn = llvm::Function::Create(type, llvm::GlobalValue::ExternalLinkage,
                                    "sonde_probe_" + std::to_string(e.probeIndex), m);
  fn->setSection(e.readsArguments ? "raw_tp/" + e.event : "tracepoint/" + e.system + "/" + e.event);
  fn->addFnAttr(llvm::Attribute::NoUnwind);
  auto *entry = llvm::BasicBlock::Create(m.getContext(), "entry", fn);
  auto *run = llvm::BasicBlock::Create(m.getContext(), "run", fn);
  auto *done = llvm::BasicBlock::Create(m.getContext(), "done", fn);
  b.SetInsertPoint(entry);
  // At the probe's line, so the handler's line information survives its
  // inlining here (its calls need a location).
  if (llvm::DISubprogram *handler = e.handler->getSubprogram())
    b.SetCurrentDebugLocation(describeProgram(m, fn, *handler));
  llvm::Value *ctx =
      b.CreateCall(SONDE_RT(b, sonde_bpf_enter),
                   {fn->getArg(0), b.constU32(e.probeIndex), b.constLong(maxAction)});
  b.CreateCondBr(b.CreateIsNull(ctx), done, run);
  b.SetInsertPoint(run);
  if (readsKernelStack(e.handler))
    b.CreateCall(SONDE_RT(b, sonde_bpf_capture_stack), {ctx, fn->getArg(0)});
  b.CreateCall(e.handler, {ctx});
  b.CreateCall(SONDE_RT(b, sonde_bpf_leave), {ctx});
  b.CreateBr(done);
  b.SetInsertPoint(done);
  b.CreateRet(b.getInt32(0));
}

bool BpfTargetImpl::finish(llvm::Module &m, const std::vector<Entry> &entries,
                           const std::vector<uint32_t> &globals, int64_t maxAction,
                           FinishError *error) {
  if (!runtime_) {
    error->message = "internal error: the BPF runtime bitcode does not load";
    return false;
  }
  for (const Entry &e : entries)
    emitEntry(m, e, maxAction);
  {
    RuntimeBuilder b(m, *this);
    emitSyscallDispatchers(b, entries);
  }
  defineProbeNames(m, entries);
  auto *license = llvm::ConstantDataArray::getString(m.getContext(), "GPL");
  auto *lic = new llvm::GlobalVariable(m, license->getType(), true,
                                       llvm::GlobalValue::ExternalLinkage, license, "LICENSE");
  lic->setSection("license");

  // Functions carry no debug info (only the maps' BTF is needed), but for
  // bpf_loop's callbacks: the kernel wants a subprogram's BTF (func_info).
  for (llvm::Function &f : *runtime_)
    if (!f.hasAddressTaken())
      llvm::stripDebugInfo(f);
  if (llvm::Linker::linkModules(m, std::move(runtime_), llvm::Linker::LinkOnlyNeeded)) {
    error->message = "internal error: the BPF runtime does not link";
    return false;
  }
  uint64_t handlerStrings = stringsStart() + functionStringBytes_;
  uint64_t recordOffset = handlerStrings + maxHandlerStringBytes_;
  // Record offsets are masked to the record's power-of-two size for the
  // verifier; a string may start at the largest masked offset.
  uint64_t recordMask = std::bit_ceil(recordBytes_) - 1;
  uint64_t scratchBytes = recordOffset + recordMask + 1 + ((shape_.strCap + 2 + 7) & ~7u);
  // The string built-ins' work area (BpfStrings.h), when the script calls one.
  uint64_t stringWork = scratchBytes;
  bool usesStringWork = m.getGlobalVariable("sonde_cfg_str_temp") != nullptr;
  if (usesStringWork)
    scratchBytes += SONDE_BPF_STRING_WORK_BYTES(shape_.strColumn);
  if (scratchBytes > SONDE_BPF_MAX_SCRATCH_BYTES) {
    error->message = bpf::scratchLimitError(scratchBytes);
    // Name the probe whose strings take the most.
    const Entry *largest = nullptr;
    for (const Entry &e : entries)
      if (!largest || handlerStringBytes_[e.handler] > handlerStringBytes_[largest->handler])
        largest = &e;
    if (largest && handlerStringBytes_[largest->handler] > 0) {
      error->probeIndex = largest->probeIndex;
      error->message += " (this probe's handler alone holds " +
                        std::to_string(handlerStringBytes_[largest->handler]) +
                        " bytes of strings)";
    }
    if (usesStringWork)
      error->message += "; the string functions' work area takes " +
                        std::to_string(SONDE_BPF_STRING_WORK_BYTES(shape_.strColumn)) + " bytes";
    return false;
  }
  if (!defineTaskOffsets(m, &error->message))
    return false;
  if (m.getGlobalVariable("sonde_cfg_hz")) {
    if (kernelHz_ <= 0) {
      error->message = "HZ() in kernel probes needs the running kernel's CONFIG_HZ, which "
                       "neither /proc/config.gz nor /boot/config-RELEASE gives";
      return false;
    }
    defineConstant(m, "sonde_cfg_hz", static_cast<uint64_t>(kernelHz_));
  }
  defineConstant(m, "sonde_cfg_str_cap", shape_.strCap);
  defineConstant(m, "sonde_cfg_stack_frames", shape_.stackFrames);
  if (usesStringWork)
    defineConstant(m, "sonde_cfg_str_temp", stringWork);
  defineConstant(m, "sonde_cfg_handler_strings", handlerStrings);
  defineConstant(m, "sonde_cfg_str_column", shape_.strColumn);
  defineConstant(m, "sonde_cfg_key_bytes", shape_.keyBytes);
  defineConstant(m, "sonde_cfg_value_bytes", shape_.valueBytes);
  defineConstant(m, "sonde_cfg_record_offset", recordOffset);
  defineConstant(m, "sonde_cfg_record_bytes", recordBytes_);
  defineConstant(m, "sonde_cfg_record_mask", recordMask);
  // What sonde sizes the scratch map and checks the shape with.
  auto *i64 = llvm::Type::getInt64Ty(m.getContext());
  std::vector<llvm::Constant *> words{llvm::ConstantInt::get(i64, scratchBytes),
                                      llvm::ConstantInt::get(i64, recordBytes_),
                                      llvm::ConstantInt::get(i64, globals.size())};
  for (uint32_t g : globals)
    words.push_back(llvm::ConstantInt::get(i64, g));
  auto *infoType = llvm::ArrayType::get(i64, words.size());
  auto *info =
      new llvm::GlobalVariable(m, infoType, true, llvm::GlobalValue::ExternalLinkage,
                               llvm::ConstantArray::get(infoType, words), "sonde_kernel_info");
  info->setSection(".rodata");
  auto *zerosType = llvm::ArrayType::get(llvm::Type::getInt8Ty(m.getContext()),
                                         std::max(shape_.keyBytes, shape_.valueBytes));
  if (llvm::GlobalVariable *zeros = m.getGlobalVariable("sonde_zeros")) {
    auto *def = new llvm::GlobalVariable(m, zerosType, true, llvm::GlobalValue::InternalLinkage,
                                         llvm::ConstantAggregateZero::get(zerosType), "");
    def->setSection(".rodata");
    def->setAlignment(llvm::Align(8));
    zeros->replaceAllUsesWith(def);
    zeros->eraseFromParent();
    def->setName("sonde_zeros");
  }

  // One program per probe (and the dispatchers): everything else is inlined.
  for (llvm::Function &f : m) {
    if (f.isDeclaration() || f.hasSection())
      continue;
    f.setLinkage(llvm::GlobalValue::InternalLinkage);
    f.removeFnAttr(llvm::Attribute::NoInline);
    f.removeFnAttr(llvm::Attribute::OptimizeNone);
    f.addFnAttr(llvm::Attribute::AlwaysInline);
  }
  for (llvm::Function &f : m)
    if (f.isDeclaration() && !f.isIntrinsic() && !f.use_empty()) {
      error->message = "internal error: kernel probes call '" + f.getName().str() +
                       "', which the BPF runtime does not define";
      return false;
    }
  return true;
}

} // namespace

std::unique_ptr<BpfTarget> makeBpfTarget(const bpf::KernelStateShape &shape, int64_t kernelHz,
                                         std::string *error) {
  static std::once_flag initialized;
  std::call_once(initialized, [] {
    LLVMInitializeBPFTargetInfo();
    LLVMInitializeBPFTarget();
    LLVMInitializeBPFTargetMC();
    LLVMInitializeBPFAsmPrinter();
  });
  std::string lookupError;
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(kTriple, lookupError);
  if (!target) {
    *error = "LLVM has no BPF target: " + lookupError;
    return nullptr;
  }
  llvm::TargetOptions options;
  std::unique_ptr<llvm::TargetMachine> tm(target->createTargetMachine(
      kTriple, "v4", "", options, llvm::Reloc::PIC_, std::nullopt, llvm::CodeGenOptLevel::Default));
  if (!tm) {
    *error = "cannot create a BPF target machine";
    return nullptr;
  }
  return std::make_unique<BpfTargetImpl>(std::move(tm), shape, kernelHz);
}

} // namespace sonde::codegen
