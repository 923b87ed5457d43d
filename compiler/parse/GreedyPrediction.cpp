#include "parse/GreedyPrediction.h"

#include <unordered_set>

namespace sonde::parse {

namespace {

// True if a semantic predicate can be reached from `s` without consuming a token.
bool reachesPredicate(antlr4::atn::ATNState *s, std::unordered_set<antlr4::atn::ATNState *> &seen) {
  if (!seen.insert(s).second)
    return false;
  for (antlr4::atn::Transition *t : s->transitions) {
    if (t->getSerializationType() == antlr4::atn::Transition::PREDICATE)
      return true;
    if (t->isEpsilon() && reachesPredicate(t->target, seen))
      return true;
  }
  return false;
}

} // namespace

void GreedyPrediction::install(antlr4::Parser &parser) {
  auto *old = parser.getInterpreter<antlr4::atn::ParserATNSimulator>();
  auto *greedy = new GreedyPrediction(&parser, parser.getATN(), old->decisionToDFA,
                                      old->getSharedContextCache());
  // The runtime's setInterpreter deletes the old simulator; the generated
  // parser's destructor deletes ours.
  parser.setInterpreter(greedy);
}

const GreedyPrediction::Decision &GreedyPrediction::decisionInfo(size_t decision) {
  if (decisions_.size() <= decision)
    decisions_.resize(atn.getNumberOfDecisions());
  std::optional<Decision> &d = decisions_[decision];
  if (!d) {
    d.emplace();
    antlr4::atn::DecisionState *state = atn.getDecisionState(decision);
    for (antlr4::atn::Transition *t : state->transitions) {
      d->firstSets.push_back(atn.nextTokens(t->target));
      std::unordered_set<antlr4::atn::ATNState *> seen;
      d->predicated = d->predicated || reachesPredicate(t->target, seen);
    }
  }
  return *d;
}

size_t GreedyPrediction::adaptivePredict(antlr4::TokenStream *input, size_t decision,
                                         antlr4::ParserRuleContext *outerContext) {
  const Decision &d = decisionInfo(decision);
  if (!d.predicated) {
    const size_t la = input->LA(1);
    size_t chosen = 0, candidates = 0, leaving = 0, leavingAlts = 0;
    for (size_t alt = 0; alt < d.firstSets.size(); ++alt) {
      if (d.firstSets[alt].contains(la)) {
        chosen = alt + 1;
        ++candidates;
      }
      if (d.firstSets[alt].contains(antlr4::Token::EPSILON)) {
        leaving = alt + 1;
        ++leavingAlts;
      }
    }
    if (candidates == 1)
      return chosen;
    // Nothing here takes the token: finish the rule and let the caller try.
    if (candidates == 0 && leavingAlts == 1)
      return leaving;
  }
  return ParserATNSimulator::adaptivePredict(input, decision, outerContext);
}

} // namespace sonde::parse
