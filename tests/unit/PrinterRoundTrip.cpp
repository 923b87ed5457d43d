#include "PrinterRoundTrip.h"

#include "ast/AstDump.h"
#include "driver/Frontend.h"
#include "driver/HostInfo.h"
#include "print/ScriptPrinter.h"

#include <sstream>

namespace sonde::test {

PrintedScript parseAndPrint(const std::string &name, const std::string &text,
                            const std::vector<std::string> &scriptArgs) {
  FrontendOptions opts;
  opts.parse.scriptArgs = scriptArgs;
  opts.parse.kernelRelease = hostKernelRelease();
  opts.parse.kernelVersion = hostKernelVersion();
  opts.parse.kernelConfig = hostKernelConfig;

  std::ostringstream diagText;
  Frontend frontend(diagText, opts);
  PrintedScript result;
  result.parsed = frontend.parseUserScript(name, text);
  result.diagnostics = diagText.str();
  if (!result.parsed)
    return result;
  result.dump = ast::dumpAst(frontend.script());
  std::ostringstream printed;
  printParsedScript(frontend.script(), printed);
  result.printed = printed.str();
  return result;
}

::testing::AssertionResult roundTrips(const std::string &name, const std::string &text,
                                      const std::vector<std::string> &scriptArgs,
                                      std::string *printed) {
  PrintedScript first = parseAndPrint(name, text, scriptArgs);
  if (!first.parsed)
    return ::testing::AssertionFailure() << "the original does not parse:\n" << first.diagnostics;
  if (printed)
    *printed = first.printed;
  // The same file name, so that the `# file` header prints the same.
  PrintedScript second = parseAndPrint(name, first.printed);
  if (!second.parsed)
    return ::testing::AssertionFailure() << "the printed script does not parse:\n"
                                         << second.diagnostics << "printed:\n"
                                         << first.printed;
  if (first.dump != second.dump)
    return ::testing::AssertionFailure()
           << "the printed script parses to a different tree\nprinted:\n"
           << first.printed << "original tree:\n"
           << first.dump << "tree of the printed script:\n"
           << second.dump;
  if (first.printed != second.printed)
    return ::testing::AssertionFailure() << "printing is not stable\nfirst:\n"
                                         << first.printed << "second:\n"
                                         << second.printed;
  return ::testing::AssertionSuccess();
}

} // namespace sonde::test
