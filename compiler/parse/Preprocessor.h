// Token-level preprocessing between the lexer and the parser (language.md 1):
// command-line arguments ($1, @1, $#, @#), @define macros and %( %? %: %)
// conditionals. Errors travel on as error tokens (see DeferredError) so that
// they surface in stap's order; warnings go straight to the DiagnosticEngine.
#pragma once

#include "diag/Diagnostics.h"
#include "parse/Lexer.h"
#include "parse/MacroLibrary.h"
#include "parse/Parser.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace sonde::parse {

class Preprocessor {
public:
  Preprocessor(const ParseOptions &opts, DiagnosticEngine &diags) : opts_(opts), diags_(diags) {}

  // Takes lexFile()'s tokens (ending in EOF) and returns what the parser sees,
  // also ending in EOF.
  std::vector<LexToken> run(std::vector<LexToken> tokens);

  // Which command-line arguments were referenced (for "unused" warnings).
  const std::vector<bool> &usedArgs() const { return usedArgs_; }

  // The file's own @defines, after run() (what a *.stpm file gives the library).
  const std::map<std::string, std::shared_ptr<Macro>> &definedMacros() const { return macros_; }

private:
  struct Activation {
    std::shared_ptr<const Macro> macro;
    size_t cursor = 0;
    std::shared_ptr<ParamMap> params;
  };
  enum class Cond : uint8_t { KeepThen, SkipThen, KeepElse, SkipElse };

  // $N/@N/$#/@# substitution over the raw token list.
  std::vector<LexToken> substituteArguments(std::vector<LexToken> tokens);
  void spliceArgument(const LexToken &t, std::vector<LexToken> &out);

  // Macro stage: the next token with @define handled and macros expanded.
  // nullopt at the end of input.
  std::optional<LexToken> nextRaw();
  std::optional<LexToken> nextExpanded(bool ignoreDefines);
  std::optional<LexToken> defineMacro(const LexToken &defineTok);
  std::optional<LexToken> invokeMacro(const LexToken &callTok, std::shared_ptr<const Macro> macro);
  // A parameter of the current expansion, else the file's macro (unless a
  // library macro is expanding), else the library's.
  std::shared_ptr<const Macro> findMacro(const std::string &name) const;
  bool isLibraryMacro(const LexToken &t) const;

  // Conditional stage.
  std::optional<LexToken> nextConditional();
  std::optional<LexToken> skipBranch();
  std::optional<LexToken> openConditional(const LexToken &open);

  // Evaluates one `LHS OP RHS` triple; on error returns the error token.
  bool evalTriple(const LexToken &l, const LexToken &op, const LexToken &r,
                  std::optional<LexToken> &error) const;

  const ParseOptions &opts_;
  DiagnosticEngine &diags_;
  std::vector<bool> usedArgs_;
  uint32_t nextOrigin_ = 1;

  std::vector<LexToken> input_;
  size_t inputPos_ = 0;
  std::vector<Activation> activations_;
  size_t macroTokens_ = 0;          // read from macro bodies so far
  bool tooManyMacroTokens_ = false; // that was reported
  LexToken outerCall_;              // the invocation in the file being expanded
  size_t outerCallOutput_ = 0;      // where its expansion starts in output_
  std::vector<LexToken> output_;    // what run() gives the parser
  std::map<std::string, std::shared_ptr<Macro>> macros_;
  std::vector<std::pair<LexToken, Cond>> conds_;
};

} // namespace sonde::parse
