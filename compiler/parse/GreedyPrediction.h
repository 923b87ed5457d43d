// stap's parser is greedy LL(1): when the next token can continue the current
// construct, it does (`x = a` then `-1` on the next line is `a - 1`). ANTLR's
// adaptive prediction agrees on valid input, but on invalid input it may exit a
// loop early and report the error at an earlier token than stap. This simulator
// commits to the one alternative whose first set holds the next token, exactly
// like stap, and only runs full prediction when several alternatives (or a
// semantic predicate) are involved. It is also faster.
#pragma once

#include "antlr4-runtime.h"

#include <optional>
#include <vector>

namespace sonde::parse {

class GreedyPrediction : public antlr4::atn::ParserATNSimulator {
public:
  using ParserATNSimulator::ParserATNSimulator;

  size_t adaptivePredict(antlr4::TokenStream *input, size_t decision,
                         antlr4::ParserRuleContext *outerContext) override;

  // Replaces `parser`'s simulator with a GreedyPrediction sharing its DFA cache.
  static void install(antlr4::Parser &parser);

private:
  struct Decision {
    std::vector<antlr4::misc::IntervalSet> firstSets; // per alternative
    bool predicated = false;
  };
  const Decision &decisionInfo(size_t decision);

  std::vector<std::optional<Decision>> decisions_;
};

} // namespace sonde::parse
