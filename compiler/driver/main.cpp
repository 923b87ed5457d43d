// sonde: compile a probe script and run it (language.md §8).
#include "driver/CommandLine.h"
#include "driver/Driver.h"
#include "driver/ReportCommand.h"

#include <iostream>
#include <string_view>

int main(int argc, char **argv) {
  // `sonde report DIR`: a recorded trace, not a script.
  if (argc > 1 && std::string_view(argv[1]) == "report")
    return sonde::runReportCommand(argc - 1, argv + 1, std::cout, std::cerr);
  std::string error;
  auto cl = sonde::parseCommandLine(argc, argv, error);
  if (!cl) {
    std::cerr << "sonde: " << error << "\n";
    return 1;
  }
  return sonde::runDriver(*cl, std::cout, std::cerr);
}
