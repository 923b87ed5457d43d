// Turns each user probe into its derived probes (Script::derived): every probe
// point is matched against the probe families and the alias names, aliases are
// expanded (recursively, with suffixes, wildcards, `?`/`!` and AND-ed
// conditions), and each concrete point gets its own copy of the body: alias
// prologues, the user's body, alias epilogues.
#pragma once

#include "ast/Ast.h"
#include "sema/ProbeMatchTree.h"
#include "sema/SemaDiagnostics.h"
#include "sema/SymbolTable.h"

#include <memory>
#include <unordered_map>
#include <unordered_set>

namespace sonde::sema {

class AliasExpander {
public:
  AliasExpander(ast::Script &script, const ProbeMatchTree &tree, SymbolTable &table,
                SemaDiagnostics &diags, std::string targetCommand = "");
  ~AliasExpander();

  // Appends the derived probes of `probe` to Script::derived and returns them.
  std::vector<ast::DerivedProbe *> derive(ast::ProbeDecl &probe);

private:
  struct Segment;
  struct Derivation;
  struct Location;
  struct DeriveError;

  void deriveLocations(const Derivation &d, std::vector<Location> &locs, bool rethrow);
  void walk(const MatchNode &node, const Location &loc, size_t pos, const Derivation &d);
  void walkDoubleGlob(const MatchNode &node, const Location &loc, size_t pos, const Derivation &d);
  void walkGlob(const MatchNode &node, const Location &loc, size_t pos, const Derivation &d);
  void walkOneMatch(const MatchNode &node, const Location &loc, size_t pos, const Derivation &d);
  void finishWildcard(const MatchNode &node, const Location &loc, size_t pos, const Derivation &d,
                      size_t before);
  void trySuffixExpansion(const MatchNode &node, const Location &loc, size_t pos,
                          const Derivation &d);
  void build(const MatchEnd &end, const Location &loc, const Derivation &d,
             const std::vector<const ast::ProbePointComponent *> &suffix);
  void expandAlias(const ast::AliasDecl &alias, const Location &loc, const Derivation &d,
                   const std::vector<const ast::ProbePointComponent *> &suffix);
  void emit(const Location &loc, const Derivation &d);
  void emitMarkers(const Location &loc, const Derivation &d);
  void emitTracepoints(const Location &loc, const Derivation &d);
  // process("GLOB").begin/end/thread...: one probe per ELF file the glob matches.
  void emitProcessGlob(const Location &loc, const Derivation &d);
  // Emits `loc` on the concrete `point` pass 2 resolved it to; the new probe.
  ast::DerivedProbe &emitConcrete(const Location &loc, const Derivation &d,
                                  std::unique_ptr<ast::ProbePoint> point);
  std::unique_ptr<ast::Block> composeBody(const Derivation &d) const;
  bool usesProbewrite(const ast::Block *b);

  ast::Script &script_;
  const ProbeMatchTree &tree_;
  SymbolTable &table_;
  SemaDiagnostics &diags_;
  std::string targetCommand_; // -c: the program a bare `process` names
  std::unordered_map<const ast::Block *, bool> probewriteCache_;
};

} // namespace sonde::sema
