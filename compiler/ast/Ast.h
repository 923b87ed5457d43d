// The Sonde abstract syntax tree: our own classes, built from the ANTLR parse tree
// by parse/AstBuilder and annotated in place by sema/ (types, resolved symbols).
//
// Ownership: every node owns its children through std::unique_ptr; cross links
// set by sema (Symbol::decl, FunctionCall::callee, ...) are plain pointers into
// the same Script.
#pragma once

#include "ast/Source.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace sonde::probes::marker {
struct CatalogSite;
} // namespace sonde::probes::marker
namespace sonde::probes::tracepoint {
struct ResolvedTracepoint;
} // namespace sonde::probes::tracepoint

namespace sonde::ast {

enum class Type : uint8_t { Unknown, Long, String, Stats };
const char *typeName(Type t); // "unknown", "long", "string", "stats"
// A string as a script literal: quoted, with C escapes for \ " and non-printables.
std::string quoteString(const std::string &s);

class Visitor;

struct Node {
  Token tok; // the token diagnostics name for this node
  virtual ~Node() = default;
  virtual void accept(Visitor &v) = 0;
};

// ---------------------------------------------------------------- expressions

struct Expr : Node {
  Type type = Type::Unknown; // set by sema
};
using ExprPtr = std::unique_ptr<Expr>;

struct NumberLit : Expr {
  int64_t value = 0;
  void accept(Visitor &v) override;
};

struct StringLit : Expr {
  std::string value; // escapes decoded, adjacent literals concatenated
  void accept(Visitor &v) override;
};

enum class BinaryOp : uint8_t {
  Add,
  Sub,
  Mul,
  Div,
  Mod,
  Shl,
  Shr,
  LShr,
  BitAnd,
  BitOr,
  BitXor,
  Concat
};
const char *binaryOpText(BinaryOp op);

struct BinaryExpr : Expr {
  BinaryOp op;
  ExprPtr lhs, rhs;
  void accept(Visitor &v) override;
};

enum class LogicalOp : uint8_t { And, Or };
struct LogicalExpr : Expr {
  LogicalOp op;
  ExprPtr lhs, rhs;
  void accept(Visitor &v) override;
};

enum class UnaryOp : uint8_t { Plus, Neg, Not, BitNot };
const char *unaryOpText(UnaryOp op);
struct UnaryExpr : Expr {
  UnaryOp op;
  ExprPtr operand;
  void accept(Visitor &v) override;
};

enum class CompareOp : uint8_t { Lt, Gt, Le, Ge, Eq, Ne };
const char *compareOpText(CompareOp op);
struct CompareExpr : Expr {
  CompareOp op;
  ExprPtr lhs, rhs;
  void accept(Visitor &v) override;
};

// s =~ "re" / s !~ "re"; the pattern is always a literal.
struct RegexMatch : Expr {
  bool negated = false;
  ExprPtr lhs;
  std::string pattern;
  void accept(Visitor &v) override;
};

struct TernaryExpr : Expr {
  ExprPtr cond, thenExpr, elseExpr;
  void accept(Visitor &v) override;
};

enum class AssignOp : uint8_t {
  Assign,
  AddAssign,
  SubAssign,
  MulAssign,
  DivAssign,
  ModAssign,
  ShlAssign,
  ShrAssign,
  AndAssign,
  XorAssign,
  OrAssign,
  ConcatAssign,
  Accumulate // <<<
};
const char *assignOpText(AssignOp op);
struct AssignExpr : Expr {
  AssignOp op;
  ExprPtr lhs, rhs;
  void accept(Visitor &v) override;
};

struct IncDecExpr : Expr {
  bool prefix = false;
  bool increment = true;
  ExprPtr operand;
  void accept(Visitor &v) override;
};

struct GlobalDecl;
struct LocalVar;
struct FunctionDecl;

// A bare name: a local, parameter or global (scalar or a whole array / stats).
struct Symbol : Expr {
  std::string name;
  // Resolved by sema: exactly one of these is set.
  GlobalDecl *global = nullptr;
  LocalVar *local = nullptr;
  void accept(Visitor &v) override;
};

struct HistOp;

// arr[k1, k2] or @hist_linear(...)[bucket]. An index may be null: the wildcard `*`
// (allowed only in delete, `in` and foreach slices).
struct ArrayIndex : Expr {
  std::unique_ptr<Symbol> base; // set for arrays
  std::unique_ptr<HistOp> hist; // set for histogram buckets
  std::vector<ExprPtr> indexes;
  void accept(Visitor &v) override;
};

// [k1, k2] in arr / k in arr
struct InExpr : Expr {
  std::vector<ExprPtr> keys; // null entries are `*`
  std::unique_ptr<Symbol> base;
  std::unique_ptr<HistOp> hist;
  void accept(Visitor &v) override;
};

struct FunctionCall : Expr {
  std::string name;
  std::vector<ExprPtr> args;
  // Resolved by sema: the overload chain of this arity (several when same-arity
  // overloads form a priority chain), or empty for a built-in.
  std::vector<FunctionDecl *> callees;
  void accept(Visitor &v) override;
};

enum class PrintKind : uint8_t {
  Print,
  Println,
  Sprint,
  Sprintln,
  Printf,
  Sprintf,
  Printd,
  Printdln,
  Sprintd,
  Sprintdln,
  PrintChar
};
const char *printKindName(PrintKind k);
bool printKindReturnsString(PrintKind k);

// One piece of a printf format: literal text or a conversion.
struct FormatComponent {
  enum class Conv : uint8_t {
    Literal,
    SignedDec,
    UnsignedDec,
    HexLower,
    HexUpper,
    Octal,
    Pointer,
    Char,
    String,
    Binary,
    Memory,
    MemoryHex,
    Percent
  };
  Conv conv = Conv::Literal;
  std::string literal; // for Literal
  bool flagMinus = false, flagPlus = false, flagZero = false, flagSpace = false, flagHash = false;
  enum class Size : uint8_t { None, Given, Star } width = Size::None, precision = Size::None;
  int64_t widthValue = 0, precisionValue = 0;
  int lengthModifiers = 0; // count of 'l'
  std::string source;      // the conversion as written, e.g. "%-08d"
};

struct PrintFormat : Expr {
  PrintKind kind;
  std::string format;                      // printf/sprintf format or printd delimiter
  std::vector<FormatComponent> components; // parsed printf format
  std::vector<ExprPtr> args;
  std::unique_ptr<HistOp> hist; // print(@hist_log(x))
  void accept(Visitor &v) override;
};

enum class StatFn : uint8_t { Count, Sum, Min, Max, Avg, Variance };
const char *statFnName(StatFn f); // "@count", ...
struct StatOp : Expr {
  StatFn fn;
  ExprPtr operand;
  std::optional<int64_t> varianceShift; // @variance(x, N)
  void accept(Visitor &v) override;
};

struct HistOp : Expr {
  bool linear = false; // @hist_linear vs @hist_log
  ExprPtr operand;
  int64_t low = 0, high = 0, width = 0; // linear only
  void accept(Visitor &v) override;
};

// A suffix on a target-ish expression: ->member or [index].
struct TargetComponent {
  enum class Kind : uint8_t { Member, Index } kind;
  Token tok;
  std::string member; // Member
  ExprPtr index;      // Index
};

// $name / $$vars / ... with optional ->/[] suffixes, & and pretty-print $ / $$.
struct TargetSymbol : Expr {
  std::string name; // including the leading $ (or $$)
  std::vector<TargetComponent> components;
  bool addressOf = false;
  int prettyDepth = 0;       // 0 = none, 1 = trailing $, 2 = trailing $$
  bool resolved = false;     // pass 2 found it in the probe's context
  bool inDeadBranch = false; // unresolved, in a branch a @defined condition rules out
  bool skippedBadvar = false; // unresolved, read as 0 under --skip-badvars
  void accept(Visitor &v) override;
};

// @cast(expr, "type"[, "module"]). An empty typeName is an autocast: suffixes
// written on a plain value (`f()->x`, `&x->a`), typed later from the value.
struct CastOp : Expr {
  ExprPtr operand;
  std::string typeName, module;
  std::vector<TargetComponent> components;
  bool addressOf = false;
  int prettyDepth = 0;
  void accept(Visitor &v) override;
};

struct AtVar : Expr { // @var("name[@cu]"[, "module"])
  std::string varName, module;
  std::vector<TargetComponent> components;
  bool addressOf = false;
  int prettyDepth = 0;
  void accept(Visitor &v) override;
};

struct DefinedOp : Expr { // @defined(expr)
  ExprPtr operand;
  void accept(Visitor &v) override;
};

struct EntryOp : Expr { // @entry(expr)
  ExprPtr operand;
  void accept(Visitor &v) override;
};

struct ProbewriteOp : Expr { // @probewrite(ident)
  std::unique_ptr<Symbol> var;
  void accept(Visitor &v) override;
};

// @perf("name"), @enum("name"), @enumname(expr[, "type"[, "module"]]).
struct SpecialAtOp : Expr {
  enum class Kind : uint8_t { Perf, Enum, EnumName } kind;
  ExprPtr operand;                  // EnumName
  std::vector<std::string> strings; // literal arguments
  void accept(Visitor &v) override;
};

// ------------------------------------------------------------------ statements

struct Stmt : Node {};
using StmtPtr = std::unique_ptr<Stmt>;

struct Block : Stmt {
  std::vector<StmtPtr> stmts;
  void accept(Visitor &v) override;
};

struct NullStmt : Stmt { // a lone ';'
  void accept(Visitor &v) override;
};

struct ExprStmt : Stmt {
  ExprPtr expr;
  void accept(Visitor &v) override;
};

struct IfStmt : Stmt {
  ExprPtr cond;
  StmtPtr thenStmt, elseStmt; // elseStmt may be null
  void accept(Visitor &v) override;
};

struct WhileStmt : Stmt {
  ExprPtr cond;
  StmtPtr body;
  void accept(Visitor &v) override;
};

struct ForStmt : Stmt {
  ExprPtr init, cond, incr; // each may be null; null cond = true
  StmtPtr body;
  void accept(Visitor &v) override;
};

enum class SortDir : int8_t { None = 0, Ascending = 1, Descending = -1 };

struct ForeachStmt : Stmt {
  std::unique_ptr<Symbol> value; // `v = ...`, may be null
  std::vector<std::unique_ptr<Symbol>> keys;
  std::unique_ptr<Symbol> base; // the array, or
  std::unique_ptr<HistOp> hist; // a histogram's buckets
  std::vector<ExprPtr> slice;   // [e, *, ...]; null entries are `*`; empty = none
  // Sort: sortColumn 0 = by value, 1..N = by key N. None when sortDir is None.
  SortDir sortDir = SortDir::None;
  int sortColumn = 0;
  std::optional<StatFn> sortAggregate; // foreach (x in a @sum+)
  ExprPtr limit;
  StmtPtr body;
  void accept(Visitor &v) override;
};

struct TryStmt : Stmt {
  std::unique_ptr<Block> tryBlock;
  std::unique_ptr<Symbol> catchVar; // may be null
  std::unique_ptr<Block> catchBlock;
  void accept(Visitor &v) override;
};

struct ReturnStmt : Stmt {
  ExprPtr value; // may be null
  void accept(Visitor &v) override;
};

struct DeleteStmt : Stmt {
  ExprPtr target; // Symbol or ArrayIndex (with wildcards)
  void accept(Visitor &v) override;
};

struct BreakStmt : Stmt {
  void accept(Visitor &v) override;
};
struct ContinueStmt : Stmt {
  void accept(Visitor &v) override;
};
struct NextStmt : Stmt {
  void accept(Visitor &v) override;
};

// ---------------------------------------------------------------- declarations

// A variable local to one probe or function body (or a function parameter).
struct LocalVar {
  Token tok; // first appearance
  std::string name;
  Type type = Type::Unknown;
  bool isParam = false;
  bool assigned = false; // written somewhere in its body (for warnings)
};

struct GlobalDecl : Node {
  std::string name;
  bool isPrivate = false;
  bool wrap = false;                 // global a%
  std::optional<int64_t> maxEntries; // global a[N]
  ExprPtr init;                      // NumberLit or StringLit
  const SourceFile *file = nullptr;
  // Set by sema.
  int arity = -1;            // -1 unknown, 0 scalar, N array
  Type type = Type::Unknown; // scalar type, or array value type
  std::vector<Type> indexTypes;
  Token arityTok; // where the arity was first inferred
  Token typeTok;  // where the type was first inferred
  bool read = false, written = false;
  void accept(Visitor &v) override;
};

struct Param {
  Token tok;
  std::string name;
  Type declared = Type::Unknown; // from `x:long`
};

struct FunctionDecl : Node {
  std::string name;
  bool isPrivate = false;
  Type declaredReturn = Type::Unknown; // from `function f:long`
  std::vector<Param> params;
  std::optional<int64_t> priority; // `:N`
  std::unique_ptr<Block> body;
  const SourceFile *file = nullptr;
  // Set by sema.
  Type returnType = Type::Unknown;
  std::vector<std::unique_ptr<LocalVar>> locals; // params first
  void accept(Visitor &v) override;
};

// One component of a probe point: `process("x")`, `mark`, `sys_*`.
struct ProbePointComponent {
  Token tok;
  std::string name; // may contain * ? [ ] wildcards
  ExprPtr arg;      // NumberLit or StringLit, may be null
};

struct ProbePoint {
  Token tok; // first component
  std::vector<ProbePointComponent> components;
  bool optional = false;   // ?
  bool sufficient = false; // !
  ExprPtr condition;       // if (expr)
  std::string str() const; // canonical text: kernel.trace("sched:*")?
};

struct ProbeDecl : Node {
  std::vector<std::unique_ptr<ProbePoint>> points; // brace groups already expanded
  std::unique_ptr<Block> body;
  const SourceFile *file = nullptr;
  void accept(Visitor &v) override;
};

// probe NAME = PPS { prologue }   /  probe NAME += PPS { epilogue }
// probe NAME = PPS { prologue }, { epilogue }
struct AliasDecl : Node {
  std::vector<std::unique_ptr<ProbePoint>> names;  // the alias spellings
  bool epilogueStyle = false;                      // +=
  std::vector<std::unique_ptr<ProbePoint>> points; // what it expands to
  std::unique_ptr<Block> body;                     // prologue (or epilogue if +=)
  std::unique_ptr<Block> epilogue;                 // combined form only
  const SourceFile *file = nullptr;
  void accept(Visitor &v) override;
};

// Made by sema: one per concrete probe point of a user probe, after alias
// expansion. Owns its own copy of the body (alias prologue + user body +
// epilogue), so each has its own locals and types.
struct DerivedProbe {
  std::unique_ptr<ProbePoint> point;         // concrete point, e.g. timer.s(1)
  ProbeDecl *origin = nullptr;               // the user's probe
  const ProbePoint *originPoint = nullptr;   // as the user wrote it (pn())
  std::vector<const AliasDecl *> aliasChain; // aliases expanded, outermost first
  std::unique_ptr<Block> body;
  ExprPtr condition; // AND of the conditions along the alias chain, may be null
  std::vector<std::unique_ptr<LocalVar>> locals;
  // process(...).mark(...): the one marker site this probe runs at (pass 2).
  std::shared_ptr<const probes::marker::CatalogSite> markerSite;
  // kernel.trace(...): the one tracepoint this probe runs at (pass 2).
  std::shared_ptr<const probes::tracepoint::ResolvedTracepoint> tracepoint;
};

struct Script {
  std::vector<std::unique_ptr<GlobalDecl>> globals;
  std::vector<std::unique_ptr<FunctionDecl>> functions;
  std::vector<std::unique_ptr<ProbeDecl>> probes;
  std::vector<std::unique_ptr<AliasDecl>> aliases;
  std::vector<std::unique_ptr<DerivedProbe>> derived; // set by sema
  // Declaration order across the four lists, for printing: (kind, index).
  enum class DeclKind : uint8_t { Global, Function, Probe, Alias };
  std::vector<std::pair<DeclKind, size_t>> order;
};

// ---------------------------------------------------------------- visitor

class Visitor {
public:
  virtual ~Visitor() = default;
  virtual void visit(NumberLit &) {}
  virtual void visit(StringLit &) {}
  virtual void visit(BinaryExpr &) {}
  virtual void visit(LogicalExpr &) {}
  virtual void visit(UnaryExpr &) {}
  virtual void visit(CompareExpr &) {}
  virtual void visit(RegexMatch &) {}
  virtual void visit(TernaryExpr &) {}
  virtual void visit(AssignExpr &) {}
  virtual void visit(IncDecExpr &) {}
  virtual void visit(Symbol &) {}
  virtual void visit(ArrayIndex &) {}
  virtual void visit(InExpr &) {}
  virtual void visit(FunctionCall &) {}
  virtual void visit(PrintFormat &) {}
  virtual void visit(StatOp &) {}
  virtual void visit(HistOp &) {}
  virtual void visit(TargetSymbol &) {}
  virtual void visit(CastOp &) {}
  virtual void visit(AtVar &) {}
  virtual void visit(DefinedOp &) {}
  virtual void visit(EntryOp &) {}
  virtual void visit(ProbewriteOp &) {}
  virtual void visit(SpecialAtOp &) {}
  virtual void visit(Block &) {}
  virtual void visit(NullStmt &) {}
  virtual void visit(ExprStmt &) {}
  virtual void visit(IfStmt &) {}
  virtual void visit(WhileStmt &) {}
  virtual void visit(ForStmt &) {}
  virtual void visit(ForeachStmt &) {}
  virtual void visit(TryStmt &) {}
  virtual void visit(ReturnStmt &) {}
  virtual void visit(DeleteStmt &) {}
  virtual void visit(BreakStmt &) {}
  virtual void visit(ContinueStmt &) {}
  virtual void visit(NextStmt &) {}
  virtual void visit(GlobalDecl &) {}
  virtual void visit(FunctionDecl &) {}
  virtual void visit(ProbeDecl &) {}
  virtual void visit(AliasDecl &) {}
};

// A visitor whose default for every node is to visit all of its children, so a
// pass overrides only the nodes it cares about and calls walk(n) to descend.
class RecursiveVisitor : public Visitor {
public:
  void visit(BinaryExpr &n) override;
  void visit(LogicalExpr &n) override;
  void visit(UnaryExpr &n) override;
  void visit(CompareExpr &n) override;
  void visit(RegexMatch &n) override;
  void visit(TernaryExpr &n) override;
  void visit(AssignExpr &n) override;
  void visit(IncDecExpr &n) override;
  void visit(ArrayIndex &n) override;
  void visit(InExpr &n) override;
  void visit(FunctionCall &n) override;
  void visit(PrintFormat &n) override;
  void visit(StatOp &n) override;
  void visit(HistOp &n) override;
  void visit(TargetSymbol &n) override;
  void visit(CastOp &n) override;
  void visit(AtVar &n) override;
  void visit(DefinedOp &n) override;
  void visit(EntryOp &n) override;
  void visit(ProbewriteOp &n) override;
  void visit(SpecialAtOp &n) override;
  void visit(Block &n) override;
  void visit(ExprStmt &n) override;
  void visit(IfStmt &n) override;
  void visit(WhileStmt &n) override;
  void visit(ForStmt &n) override;
  void visit(ForeachStmt &n) override;
  void visit(TryStmt &n) override;
  void visit(ReturnStmt &n) override;
  void visit(DeleteStmt &n) override;
  void visit(GlobalDecl &n) override;
  void visit(FunctionDecl &n) override;
  void visit(ProbeDecl &n) override;
  void visit(AliasDecl &n) override;

protected:
  // Visits n if it is non-null.
  template <class T> void walk(const std::unique_ptr<T> &n) {
    if (n)
      n->accept(*this);
  }
  void walkComponents(std::vector<TargetComponent> &cs);
};

} // namespace sonde::ast
