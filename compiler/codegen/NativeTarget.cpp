// The x86-64 native target: handlers become a position-independent shared object
// that sonde and the in-target agent dlopen(). Runtime calls resolve at load time
// against the sonde_rt functions the loading process exports; string helpers call
// libc, which every loading process has.
#include "codegen/CodegenTarget.h"
#include "codegen/InlineRecordAppend.h"
#include "codegen/RuntimeBuilder.h"

#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Target/TargetOptions.h>
#include <llvm/TargetParser/Host.h>

#include <cstring>
#include <dlfcn.h>
#include <fcntl.h>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <spawn.h>
#include <sstream>
#include <sys/wait.h>
#include <unordered_map>

extern char **environ;

namespace sonde::codegen {

namespace {

constexpr const char *kTriple = "x86_64-pc-linux-gnu";

std::optional<llvm::CodeGenOptLevel> codeGenLevel(unsigned level) {
  return llvm::CodeGenOpt::getLevel(static_cast<int>(level));
}

// Runs `argv` with stderr captured into `logPath`; returns the exit status or -1.
int runTool(const std::vector<std::string> &argv, const std::string &logPath) {
  std::vector<char *> args;
  for (const auto &a : argv)
    args.push_back(const_cast<char *>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 2, logPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  pid_t pid;
  int rc = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0)
    return -1;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

class NativeTarget final : public CodegenTarget {
public:
  explicit NativeTarget(std::unique_ptr<llvm::TargetMachine> tm) : tm_(std::move(tm)) {}

  void prepareModule(llvm::Module &m) override {
    m.setTargetTriple(kTriple);
    m.setDataLayout(tm_->createDataLayout());
    m.setPICLevel(llvm::PICLevel::BigPIC);
  }

  llvm::TargetMachine &machine() override { return *tm_; }

  llvm::FunctionCallee runtimeFunction(llvm::Module &m, llvm::StringRef name,
                                       llvm::FunctionType *type) override {
    llvm::FunctionCallee callee = m.getOrInsertFunction(name, type);
    if (auto *f = llvm::dyn_cast<llvm::Function>(callee.getCallee()))
      f->addFnAttr(llvm::Attribute::NoUnwind);
    return callee;
  }

  bool providesBuiltin(const std::string &symbol) override {
    return dlsym(RTLD_DEFAULT, symbol.c_str()) != nullptr;
  }

  llvm::Value *newStringBuffer(RuntimeBuilder &b, uint32_t cap) override {
    return b.entryAlloca(llvm::ArrayType::get(b.getInt8Ty(), cap), "str");
  }

  llvm::Constant *stringConstant(RuntimeBuilder &b, llvm::StringRef text) override {
    llvm::Constant *&c = strings_[text.str()];
    if (!c)
      c = b.CreateGlobalString(text, ".str", 0, &b.module());
    return c;
  }

  void copyString(RuntimeBuilder &b, llvm::Value *dst, llvm::Value *src, uint32_t cap) override {
    llvm::Value *n = b.CreateCall(SONDE_RT(b, strnlen), {src, b.getInt64(cap - 1)}, "len");
    b.CreateMemMove(dst, llvm::MaybeAlign(1), src, llvm::MaybeAlign(1), n);
    b.CreateStore(b.getInt8(0), b.CreateInBoundsGEP(b.getInt8Ty(), dst, n));
  }

  void appendString(RuntimeBuilder &b, llvm::Value *dst, llvm::Value *src, uint32_t cap) override {
    // Bounded: `dst` may be a string global another process left unterminated.
    llvm::Value *len = b.CreateCall(SONDE_RT(b, strnlen), {dst, b.getInt64(cap - 1)}, "dstlen");
    llvm::Value *room = b.CreateSub(b.getInt64(cap - 1), len, "room");
    llvm::Value *n = b.CreateCall(SONDE_RT(b, strnlen), {src, room}, "srclen");
    llvm::Value *end = b.CreateInBoundsGEP(b.getInt8Ty(), dst, len);
    b.CreateMemMove(end, llvm::MaybeAlign(1), src, llvm::MaybeAlign(1), n);
    b.CreateStore(b.getInt8(0), b.CreateInBoundsGEP(b.getInt8Ty(), end, n));
  }

  // One buffer for the whole chain; the length so far is carried from part to
  // part and the NUL written once (a buffer and a NUL store per operator made
  // the stack frame grow with the chain, and LLVM's store vectorizer quadratic
  // in it). A long chain appends through one small function, so that the
  // handler stays a plain sequence of calls: thousands of inline appends in a
  // block made LLVM's vectorizer and two-address pass quadratic again.
  llvm::Value *concatStrings(RuntimeBuilder &b, size_t count,
                             const std::function<llvm::Value *(size_t)> &part,
                             const std::function<llvm::Value *()> &temp, uint32_t cap) override {
    llvm::Value *dst = temp();
    llvm::Value *len = b.getInt64(0);
    llvm::Function *append = count > kInlineConcatParts ? concatPartFunction(b, cap) : nullptr;
    for (size_t i = 0; i < count; ++i) {
      llvm::Value *src = part(i);
      len =
          append ? b.CreateCall(append, {dst, len, src}, "len") : appendPart(b, dst, len, src, cap);
    }
    b.CreateStore(b.getInt8(0), b.CreateInBoundsGEP(b.getInt8Ty(), dst, len));
    return dst;
  }

  llvm::Value *compareStrings(RuntimeBuilder &b, llvm::Value *lhs, llvm::Value *rhs) override {
    return b.CreateCall(SONDE_RT(b, strcmp), {lhs, rhs}, "cmp");
  }

  llvm::Value *stateBase(RuntimeBuilder &b, llvm::Value *ctx) override {
    return b.CreateLoad(b.ptrTy(), b.contextField(ctx, offsetof(sonde_context, segment)), "seg");
  }

  void emitPrintf(RuntimeBuilder &b, llvm::Value *ctx, const PrintfCall &call) override {
    auto runtimeCall = [&] {
      b.CreateCall(SONDE_RT(b, sonde_out_printf),
                   {ctx, b.constU32(call.format), call.args, b.constU32(call.loc)});
    };
    // Each inline append is a loop (the varints) and LLVM's loop passes take
    // time quadratic in the loops of a function: past the first few in a
    // function, records go through the runtime (the same bytes, a call more).
    if (appendsInline(call) &&
        inlineAppends_[b.GetInsertBlock()->getParent()]++ < kMaxInlineAppendsPerFunction)
      emitInlineRecordAppend(b, ctx, call, runtimeCall);
    else
      runtimeCall();
  }

  void emitPrintValues(RuntimeBuilder &b, llvm::Value *ctx, llvm::Value *values, uint32_t count,
                       llvm::Value *delimiter, bool newline) override {
    if (!delimiter)
      delimiter = llvm::ConstantPointerNull::get(b.ptrTy());
    b.CreateCall(SONDE_RT(b, sonde_out_print),
                 {ctx, values, b.constU32(count), delimiter, b.getInt32(newline ? 1 : 0)});
  }

  void emitPrintChar(RuntimeBuilder &b, llvm::Value *ctx, llvm::Value *c) override {
    b.CreateCall(SONDE_RT(b, sonde_out_char), {ctx, c});
  }

  void emitPrintHistogram(RuntimeBuilder &b, llvm::Value *ctx, llvm::Value *aggregate,
                          llvm::Value *keys, uint32_t loc) override {
    if (keys)
      b.CreateCall(SONDE_RT(b, sonde_out_hist_map), {ctx, aggregate, keys, b.constU32(loc)});
    else
      b.CreateCall(SONDE_RT(b, sonde_out_hist_stats), {ctx, aggregate, b.constU32(loc)});
  }

  bool emitObject(llvm::Module &m, const std::string &objectPath, std::string *error) override {
    return writeObjectFile(*tm_, m, objectPath, "x86-64", error);
  }

  bool link(const std::string &objectPath, const std::string &modulePath,
            std::string *error) override {
    // Runtime symbols stay undefined: the process that loads the module has them.
    std::string log = modulePath + ".ld.log";
    int rc =
        runTool({SONDE_LD_LLD, "-shared", "-z", "noexecstack", "-z", "relro", "--hash-style=gnu",
                 "-soname", "sonde_module.so", "-o", modulePath, objectPath},
                log);
    if (rc == 0)
      return true;
    std::ifstream in(log);
    std::stringstream text;
    text << in.rdbuf();
    *error = rc < 0 ? std::string("cannot run the linker ") + SONDE_LD_LLD
                    : "linking the module failed: " + text.str();
    return false;
  }

  const char *moduleFileName() const override { return "module.so"; }

private:
  // Chains of more parts than this append through concatPartFunction().
  static constexpr size_t kInlineConcatParts = 16;
  static constexpr unsigned kMaxInlineAppendsPerFunction = 64;

  // Appends src at dst + len (room for cap - 1 bytes); the new length.
  static llvm::Value *appendPart(RuntimeBuilder &b, llvm::Value *dst, llvm::Value *len,
                                 llvm::Value *src, uint32_t cap) {
    llvm::Value *room = b.CreateSub(b.getInt64(cap - 1), len, "room");
    llvm::Value *n = b.CreateCall(SONDE_RT(b, strnlen), {src, room}, "partlen");
    b.CreateMemMove(b.CreateInBoundsGEP(b.getInt8Ty(), dst, len), llvm::MaybeAlign(1), src,
                    llvm::MaybeAlign(1), n);
    return b.CreateAdd(len, n, "len");
  }

  // i64 sonde.concat_part(ptr dst, i64 len, ptr src): appendPart as a function
  // of the module, never inlined.
  static llvm::Function *concatPartFunction(RuntimeBuilder &b, uint32_t cap) {
    llvm::Module &m = b.module();
    if (llvm::Function *f = m.getFunction("sonde.concat_part"))
      return f;
    auto *type = llvm::FunctionType::get(b.longTy(), {b.ptrTy(), b.longTy(), b.ptrTy()}, false);
    auto *f =
        llvm::Function::Create(type, llvm::GlobalValue::InternalLinkage, "sonde.concat_part", m);
    f->addFnAttr(llvm::Attribute::NoUnwind);
    f->addFnAttr(llvm::Attribute::NoInline);
    RuntimeBuilder body(m, b.target());
    body.SetInsertPoint(llvm::BasicBlock::Create(m.getContext(), "entry", f));
    body.CreateRet(appendPart(body, f->getArg(0), f->getArg(1), f->getArg(2), cap));
    return f;
  }

  std::unordered_map<const llvm::Function *, unsigned> inlineAppends_;
  std::unique_ptr<llvm::TargetMachine> tm_;
  std::map<std::string, llvm::Constant *> strings_; // one constant per text
};

} // namespace

std::unique_ptr<CodegenTarget> makeNativeTarget(unsigned optLevel, std::string *error) {
  static std::once_flag initialized;
  std::call_once(initialized, [] {
    LLVMInitializeX86TargetInfo();
    LLVMInitializeX86Target();
    LLVMInitializeX86TargetMC();
    LLVMInitializeX86AsmPrinter();
  });
  std::string lookupError;
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(kTriple, lookupError);
  if (!target) {
    *error = "LLVM has no x86-64 target: " + lookupError;
    return nullptr;
  }
  auto level = codeGenLevel(optLevel);
  if (!level) {
    *error = "invalid optimisation level " + std::to_string(optLevel);
    return nullptr;
  }
  llvm::TargetOptions options;
  // Handlers run on this machine: prefetch for writing (the relay records'
  // lines, RecordCursor.h) where the CPU has the instruction.
  std::string features = llvm::sys::getHostCPUFeatures().lookup("prfchw") ? "+prfchw" : "";
  std::unique_ptr<llvm::TargetMachine> tm(target->createTargetMachine(
      kTriple, "x86-64", features, options, llvm::Reloc::PIC_, llvm::CodeModel::Small, *level));
  if (!tm) {
    *error = "cannot create an x86-64 target machine";
    return nullptr;
  }
  return std::make_unique<NativeTarget>(std::move(tm));
}

} // namespace sonde::codegen
