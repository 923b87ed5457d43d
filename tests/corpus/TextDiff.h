// A line diff for test failure messages: what was expected against what came out.
#pragma once

#include <string>

namespace sonde::test {

// Lines only in `expected` are prefixed "-", lines only in `actual` "+", common
// lines " ". Tabs show as "\t" and a missing final newline is called out, since
// both matter when comparing diagnostics byte for byte.
std::string lineDiff(const std::string &expected, const std::string &actual);

} // namespace sonde::test
