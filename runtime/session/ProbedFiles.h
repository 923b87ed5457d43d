// The files that make a process of a -c session worth attaching: the binaries
// holding the module's marker sites and the executables its process("PATH")
// lifecycle probes name. Agents carried into exec'd programs attach only where
// one of them is the executable or a loaded library, and report which; sonde
// warns at exit about those no traced process ran or loaded.
#pragma once

#include "runtime/session/LoadedModule.h"

#include <set>
#include <string>
#include <sys/types.h>
#include <vector>

namespace sonde::session {

struct ProbedFile {
  std::string path; // as the module names it
  dev_t dev = 0;
  ino_t ino = 0;
  bool library = false; // a shared object (no program interpreter), not a program
};

struct ProbedFiles {
  std::vector<ProbedFile> files; // distinct files (by path) that exist
  bool anyProcess = false;       // a lifecycle probe without a path runs everywhere
};

ProbedFiles probedFiles(const LoadedModule &module);

// SONDE_AGENT_PROBED: "DEV:INO,...", led by "*" when any process is probed;
// the agent reports each it finds as "probed DEV:INO".
std::string encodeProbedFiles(const ProbedFiles &probed);
std::string fileIdText(dev_t dev, ino_t ino);

// The closing warnings for the files no traced process ran or loaded, given the
// ids the agents reported: "no process ran PATH" / "no process loaded PATH".
std::vector<std::string> probedFilesNotSeen(const ProbedFiles &probed,
                                            const std::set<std::string> &seenIds);

} // namespace sonde::session
