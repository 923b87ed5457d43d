// The passes recurse over the script: the parser over its nesting, every later
// pass over the AST's depth. The parser bounds both (parse/Parser.cpp), and the
// compiler runs on a thread whose stack holds that depth with room to spare,
// whatever stack the process was given (`ulimit -s`).
#pragma once

#include <cstddef>
#include <functional>
#include <string>

namespace sonde {

// Reserved, not committed: only the pages a deep script touches are used. The
// deepest scripts the parser accepts need about 5 MiB (1000 nested parentheses
// around a 9000-operator chain); LLVM's passes over them stay well below that.
inline constexpr size_t kCompilerStackBytes = size_t{64} << 20;

// Runs `work` on a thread with a kCompilerStackBytes stack and waits for it; an
// exception `work` throws is rethrown here. False (reason in *error) when the
// thread cannot be created.
bool runOnCompilerStack(const std::function<void()> &work, std::string *error);

} // namespace sonde
