// Pass 3: the elaborated AST as LLVM IR. One visitor, split by construct family:
//
//   IrGenerator.cpp     handlers, user functions, locals, scopes, errors, MAXACTION
//   GenExpressions.cpp  literals, operators, comparisons, strings, regex, variables
//   GenAssignments.cpp  assignment operators, ++/--, <<< on every kind of lvalue
//   GenStatements.cpp   blocks, if/while/for, try/catch, break/continue/next/return, delete
//   GenForeach.cpp      foreach over arrays (sorts, slices, limit) and histogram buckets
//   GenAggregates.cpp   array elements, keys, `in`, stats extractors, histogram buckets
//   GenPrint.cpp        the print family, printf/sprintf, histograms
//   GenCalls.cpp        user function chains and built-in functions
//
// Error model (runtime/session/ContextAbi.h): a failing operation sets ctx->error;
// generated code branches to the error landing of the innermost scope, which ends
// the foreach loops being left and continues at the innermost `catch` (unless the
// error is uncatchable) or at the function's exit. Handlers take their locks on
// entry and release them at their single exit.
#pragma once

#include "ast/Ast.h"
#include "codegen/CodegenOptions.h"
#include "codegen/ModuleTables.h"
#include "codegen/RuntimeBuilder.h"
#include "codegen/ScriptFacts.h"
#include "diag/Diagnostics.h"
#include "runtime/format/FormatAbi.h"

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace sonde::probes::marker {
struct ArgSpec;
struct X86Register;
} // namespace sonde::probes::marker
namespace sonde::probes::tracepoint {
struct TracepointFormat;
struct ResolvedTracepoint;
} // namespace sonde::probes::tracepoint

namespace sonde::codegen {

class SourceLines;

// A value of the language: an i64 (long) or a pointer to a NUL-terminated
// buffer (string) that stays valid until the end of the current statement.
struct Value {
  llvm::Value *v = nullptr;
  ast::Type type = ast::Type::Unknown;
};

class IrGenerator : public ast::Visitor {
public:
  IrGenerator(const ScriptFacts &facts, ModuleTables &tables, llvm::Module &m,
              CodegenTarget &target, const CodegenOptions &opts, DiagnosticEngine &diags);
  ~IrGenerator() override;

  // Emits every reachable function, every handler and the global initializer.
  // Returns false if something could not be compiled (errors reported).
  bool generate();
  // handlers()[i] runs facts.probes()[i].
  const std::vector<llvm::Function *> &handlers() const { return handlers_; }
  // Whether handlers()[i] (a kernel.trace probe) reads the tracepoint's C
  // arguments, so runs as a raw tracepoint program.
  bool readsArguments(size_t i) const { return i < argumentReaders_.size() && argumentReaders_[i]; }
  llvm::Function *globalInitializer() const { return initGlobals_; }
  RuntimeBuilder &builder() { return b_; }

  // Expressions (each leaves its Value in result_).
  void visit(ast::NumberLit &) override;
  void visit(ast::StringLit &) override;
  void visit(ast::BinaryExpr &) override;
  void visit(ast::LogicalExpr &) override;
  void visit(ast::UnaryExpr &) override;
  void visit(ast::CompareExpr &) override;
  void visit(ast::RegexMatch &) override;
  void visit(ast::TernaryExpr &) override;
  void visit(ast::AssignExpr &) override;
  void visit(ast::IncDecExpr &) override;
  void visit(ast::Symbol &) override;
  void visit(ast::ArrayIndex &) override;
  void visit(ast::InExpr &) override;
  void visit(ast::FunctionCall &) override;
  void visit(ast::PrintFormat &) override;
  void visit(ast::StatOp &) override;
  void visit(ast::HistOp &) override;
  void visit(ast::TargetSymbol &) override;
  void visit(ast::CastOp &) override;
  void visit(ast::AtVar &) override;
  void visit(ast::DefinedOp &) override;
  void visit(ast::EntryOp &) override;
  void visit(ast::ProbewriteOp &) override;
  void visit(ast::SpecialAtOp &) override;
  // Statements.
  void visit(ast::Block &) override;
  void visit(ast::NullStmt &) override;
  void visit(ast::ExprStmt &) override;
  void visit(ast::IfStmt &) override;
  void visit(ast::WhileStmt &) override;
  void visit(ast::ForStmt &) override;
  void visit(ast::ForeachStmt &) override;
  void visit(ast::TryStmt &) override;
  void visit(ast::ReturnStmt &) override;
  void visit(ast::DeleteStmt &) override;
  void visit(ast::BreakStmt &) override;
  void visit(ast::ContinueStmt &) override;
  void visit(ast::NextStmt &) override;

private:
  // ---------------------------------------------------------------- per function
  struct Scope {
    enum class Kind : uint8_t { Loop, Foreach, Try } kind;
    llvm::BasicBlock *breakTo = nullptr, *continueTo = nullptr;
    llvm::Value *iterator = nullptr;     // a foreach over an array: ended when left
    llvm::BasicBlock *catchTo = nullptr; // a try: where its errors go
    llvm::BasicBlock *landing = nullptr; // error landing of code inside (cached)
  };
  // The stats value variable of `foreach (v = [k...] in statsArray)`.
  struct StatsBinding {
    llvm::Value *iterator;
    const ast::ForeachStmt *loop;
  };
  struct FunctionState {
    llvm::Function *fn = nullptr;
    llvm::Value *ctx = nullptr;
    llvm::Value *base = nullptr;         // the state base globals are relative to
    llvm::BasicBlock *exit = nullptr;    // every way out ends here
    llvm::BasicBlock *landing = nullptr; // error landing outside every scope
    std::vector<Scope> scopes;
    std::unordered_map<const ast::LocalVar *, llvm::Value *> locals; // i64 slot / string buffer
    std::unordered_map<const ast::LocalVar *, StatsBinding> statsValues;
    std::vector<llvm::Value *> stringPool;
    size_t stringPoolUsed = 0;
    std::vector<llvm::AllocaInst *> statementArrays; // live until their statement ends
    unsigned pendingActions = 0;
    const ast::FunctionDecl *decl = nullptr; // null in a handler
    llvm::Value *returnSlot = nullptr;       // long result
    llvm::Value *returnOut = nullptr;        // string result buffer
    llvm::Value *nextFlag = nullptr;         // i32 the caller reads after the call
  };

  // IrGenerator.cpp
  llvm::Function *declareFunction(const ast::FunctionDecl &f);
  void emitFunction(const ast::FunctionDecl &f);
  llvm::Function *emitHandler(const EmittedProbe &p, size_t index);
  llvm::Value *readClockNs();
  llvm::Function *emitGlobalInitializer();
  void beginBody(llvm::Function *fn, llvm::Value *ctx);
  void declareLocals(const std::vector<std::unique_ptr<ast::LocalVar>> &locals, size_t skip);
  void finishBody(const Token &endTok);
  llvm::Value *localSlot(const ast::LocalVar &v);
  llvm::Value *stringTemp();
  // An argument array (printf's, print's, sprintf's) that lives only while the
  // current statement runs: the arrays of different statements share stack,
  // which a BPF program has 512 bytes of.
  llvm::Value *statementArray(llvm::ArrayType *type, const llvm::Twine &name);
  void emitStatement(ast::Stmt &s);
  void checkTargetSupport(const Token &tok);
  void startDeadBlock();
  llvm::BasicBlock *newBlock(const llvm::Twine &name);
  void pushScope(Scope s) { fs_.scopes.push_back(s); }
  void popScope() { fs_.scopes.pop_back(); }
  void jumpOutOfLoop(const Token &tok, bool isBreak); // GenStatements.cpp
  // Ends the foreach loops of scopes [depth, top) (innermost first).
  void leaveScopesDownTo(size_t depth);
  llvm::BasicBlock *errorLanding();
  void branchOnError();
  void raise(int32_t status, const Token &tok);
  void raiseIf(llvm::Value *cond, int32_t status, const Token &tok);
  void raiseStatusIfFailed(llvm::Value *status, const Token &tok, llvm::Value *map = nullptr);
  void recordActions(unsigned n, const Token &tok, bool update = false);
  uint32_t loc(const Token &tok) { return tables_.location(tok); }
  // GenContextVariables.cpp: a marker argument of the handler's site, as a long.
  llvm::Value *markerArgument(const probes::marker::ArgSpec &arg, const Token &tok);
  llvm::Value *markerRegister(const probes::marker::X86Register &reg);
  llvm::Value *markerLoadBias();
  // GenTracepointVariables.cpp
  static bool readsTracepointArguments(const ast::DerivedProbe &p);
  void tracepointVariable(const probes::tracepoint::ResolvedTracepoint &tp, ast::TargetSymbol &e);
  void tracepointField(const probes::tracepoint::TracepointFormat &format, ast::TargetSymbol &e);
  void tracepointArgument(const probes::tracepoint::ResolvedTracepoint &tp, ast::TargetSymbol &e);
  void fail(const std::string &msg, const Token &tok);

  // GenExpressions.cpp
  Value eval(ast::Expr &e);
  llvm::Value *evalLong(ast::Expr &e) { return eval(e).v; }
  llvm::Value *evalString(ast::Expr &e) { return eval(e).v; }
  llvm::Value *evalCondition(ast::Expr &e); // i1
  llvm::Value *stringLiteral(const std::string &s);
  llvm::Value *longBinary(ast::BinaryOp op, llvm::Value *l, llvm::Value *r, const Token &tok);
  Value concat(ast::BinaryExpr &e);
  llvm::Value *globalData(const ast::GlobalDecl &g);
  llvm::Value *globalHeader(const ast::GlobalDecl &g);
  const GlobalSlot *slotOf(const ast::GlobalDecl *g, const Token &tok);
  llvm::Value *toI64(llvm::Value *i1) { return b_.CreateZExt(i1, b_.longTy()); }

  // GenAssignments.cpp
  // `shared`: a global's storage, which other handlers may update at once.
  Value assignScalar(ast::AssignOp op, llvm::Value *addr, ast::Type type, ast::Expr &rhs,
                     const Token &tok, bool shared);
  llvm::Value *addToLong(llvm::Value *addr, llvm::Value *delta, bool shared);
  Value incDecAt(ast::IncDecExpr &e, llvm::Value *addr, bool shared);
  Value assignElement(ast::AssignExpr &e, ast::ArrayIndex &lhs);
  void accumulate(ast::AssignExpr &e);
  Value incDecElement(ast::IncDecExpr &e, ast::ArrayIndex &a);
  llvm::Value *scalarAddress(ast::Symbol &s); // a local or global scalar
  static std::optional<ast::BinaryOp> arithmeticOf(ast::AssignOp op);
  static const Token &divisionToken(const ast::AssignExpr &e);

  // GenAggregates.cpp
  llvm::Value *evalKeys(const GlobalSlot &slot, std::vector<ast::ExprPtr> &indexes,
                        uint32_t *wildMask, const Token &where);
  llvm::Value *currentKeys(const StatsBinding &binding);
  llvm::Value *extractStat(ast::Expr &aggregate, int32_t extractor, const Token &tok);
  llvm::Value *histogramBucket(ast::HistOp &h, llvm::Value *index, const Token &tok);
  llvm::Value *statsSummary(ast::Expr &aggregate, const Token &tok);
  const StatsBinding *statsBindingOf(ast::Expr &e);

  // GenForeach.cpp
  void foreachArray(ast::ForeachStmt &s);
  void foreachBuckets(ast::ForeachStmt &s);
  void assignVariable(ast::Symbol &var, Value value);

  // GenPrint.cpp
  void print(ast::PrintFormat &p);
  llvm::Value *sprint(ast::PrintFormat &p);
  // The printf argument array; with `timeArgs`, gettimeofday_ns() arguments are
  // left 0 and named in *timeArgs (ModuleAbi.h format_time_args).
  // The items of p's format, or nullopt (reported) when it does not parse or
  // does not consume exactly p's arguments.
  std::optional<std::vector<SondeFormatItem>> checkedFormat(ast::PrintFormat &p);
  llvm::Value *formatArgs(ast::PrintFormat &p, uint64_t *timeArgs = nullptr);
  // Where a printf is: the probe point, or "function NAME" (binary traces' event names).
  std::string formatSource() const;
  llvm::Value *argumentArray(ast::PrintFormat &p, uint64_t timeArgs);
  llvm::Value *printValues(ast::PrintFormat &p);
  void printAsRecord(ast::PrintFormat &p);
  void describeLines(llvm::Function &fn, const Token &tok);
  // GenKernelSprintf.cpp
  void sprintfByAppends(ast::PrintFormat &p, llvm::Value *out);
  void appendKernelFormat(llvm::Value *out, const std::string &format,
                          const std::vector<llvm::Value *> &args);
  void sprintValuesByAppends(ast::PrintFormat &p, bool delimited, bool newline, llvm::Value *out);
  void printHistogram(ast::PrintFormat &p);
  void sprintHistogram(ast::PrintFormat &p, llvm::Value *out);

  // GenCalls.cpp
  Value callUserFunction(ast::FunctionCall &c);
  Value callBuiltin(ast::FunctionCall &c);

  const ScriptFacts &facts_;
  ModuleTables &tables_;
  llvm::Module &module_;
  CodegenTarget &target_;
  const CodegenOptions &opts_;
  DiagnosticEngine &diags_;
  RuntimeBuilder b_;
  uint32_t strCap_; // MAXSTRINGLEN
  bool ok_ = true;

  FunctionState fs_;
  const Token *statementTok_ = nullptr;                     // the statement being emitted
  std::set<std::pair<std::string, const Token *>> refused_; // constructs reported
  std::unique_ptr<SourceLines> lines_;                      // kernel modules: line information
  std::unordered_set<const ast::Stmt *> deadStores_;        // of the body being emitted
  const EmittedProbe *probe_ = nullptr;                     // the handler being emitted, if any
  Value result_;
  std::unordered_map<const ast::FunctionDecl *, llvm::Function *> functions_;
  std::vector<llvm::Function *> handlers_;
  std::vector<bool> argumentReaders_;
  bool readsArguments_ = false; // the handler being emitted reads C arguments
  llvm::Function *initGlobals_ = nullptr;
  std::unordered_map<std::string, llvm::GlobalVariable *> regexCache_;
};

} // namespace sonde::codegen
