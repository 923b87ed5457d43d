// Parses the argument string of an SDT note ("8@%rdi -4@-20(%rbp) 4@$42") into
// ArgSpecs, in the AT&T operand syntax GCC and clang emit for sys/sdt.h and
// sonde/sdt.h on x86-64.
#pragma once

#include "probes/marker/ArgSpec.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sonde::probes::marker {

class ArgSpecParser {
public:
  // One spec such as "-8@foo+8(%rip)". On failure returns nullopt and sets `error`
  // to a message naming the spec and what is wrong with it.
  static std::optional<ArgSpec> parse(std::string_view spec, std::string &error);

  // A note's whole space-separated argument string; empty for a marker without
  // arguments. Fails on the first bad spec.
  static std::optional<std::vector<ArgSpec>> parseList(std::string_view args, std::string &error);
};

} // namespace sonde::probes::marker
