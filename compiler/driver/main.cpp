// sonde: compile a probe script and run it (language.md §8).
#include "driver/CommandLine.h"
#include "driver/Driver.h"

#include <iostream>

int main(int argc, char **argv) {
  std::string error;
  auto cl = sonde::parseCommandLine(argc, argv, error);
  if (!cl) {
    std::cerr << "sonde: " << error << "\n";
    return 1;
  }
  return sonde::runDriver(*cl, std::cout, std::cerr);
}
