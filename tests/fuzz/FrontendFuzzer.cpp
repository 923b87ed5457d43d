// libFuzzer entry for passes 1-2. Beyond "no crash, no hang, no sanitizer
// report", it checks the -p1 promise: whatever parses prints as a script that
// parses again to the same AST.
#include "ast/AstDump.h"
#include "driver/Frontend.h"
#include "print/ScriptPrinter.h"

#include <cstdio>
#include <cstdlib>
#include <pthread.h>
#include <sstream>

namespace {

sonde::FrontendOptions fuzzOptions() {
  sonde::FrontendOptions o;
  o.loadStdlib = false; // the tapsets are parsed by the tests; keep each input fast
  o.parse.scriptArgs = {"1", "x"};
  o.parse.kernelVersion = "6.18.0";
  o.parse.kernelRelease = "6.18.0-fuzz";
  return o;
}

void checkInput(const std::string &text) {
  std::ostringstream diagnostics;
  sonde::Frontend first(diagnostics, fuzzOptions());
  if (!first.parseUserScript("fuzz.probe", text))
    return;

  std::ostringstream printed;
  sonde::printParsedScript(first.script(), printed);
  std::ostringstream diagnostics2;
  sonde::Frontend second(diagnostics2, fuzzOptions());
  if (!second.parseUserScript("printed.probe", printed.str())) {
    std::fprintf(stderr, "-p1 output does not parse:\n%s\n%s\n", printed.str().c_str(),
                 diagnostics2.str().c_str());
    std::abort();
  }
  if (sonde::ast::dumpAst(first.script()) != sonde::ast::dumpAst(second.script())) {
    std::fprintf(stderr, "-p1 output parses to a different AST:\n%s\n", printed.str().c_str());
    std::abort();
  }
  first.elaborate();
}

void *checkOnThread(void *text) {
  checkInput(*static_cast<const std::string *>(text));
  return nullptr;
}

} // namespace

// ASan's frames are several times larger than a release build's, so the depth
// the parser lets through (1000 levels of nesting, 10000 of chained operators)
// would overflow the default 8 MB stack here; `sonde` runs these passes on a
// stack of its own too (driver/CompilerStack.h). Each input runs on a thread
// with the stack that depth needs.
extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, size_t{256} << 20);
  pthread_t thread;
  if (pthread_create(&thread, &attr, checkOnThread, &text) != 0)
    std::abort();
  pthread_join(thread, nullptr);
  pthread_attr_destroy(&attr);
  return 0;
}
