// Which marker sites a `process("...")[.library("...")].provider("...").mark("...")`
// point names: the ELF objects it covers, their stapsdt notes (cached per file) and
// the link-time addresses of symbols in the argument operands.
#pragma once

#include "probes/marker/SdtNoteReader.h"

#include <optional>
#include <string>
#include <vector>

namespace sonde::probes::marker {

// One marker site found in one ELF object, with the argument symbols resolved.
struct CatalogSite {
  std::string binary; // absolute, canonical (realpath) path of the ELF object
  MarkerSite site;
};

struct MarkerQuery {
  std::string process;        // the process("...") argument; "" for bare `process`
  std::string library;        // the .library("...") argument, "" if none
  std::string provider = "*"; // .provider("...") glob, "*" if absent
  std::string name;           // .mark("...") glob
  std::string targetCommand;  // the -c command's first word (for bare `process`), may be ""
};

struct MarkerQueryResult {
  std::vector<CatalogSite> sites;    // in object order, then note order
  std::string error;                 // non-empty: why nothing could be looked up
  std::string program;               // the canonical path process("...") (or -c) names
  std::vector<std::string> allNames; // every marker name in the searched objects, sorted
  std::vector<std::string> objects;  // the objects searched, by canonical path
};

class MarkerCatalog {
public:
  // The sites `q` names. Objects searched: the program (or library) file
  // process("X") names, plus the libraries it needs that are not system libraries;
  // with .library("L") only L. Provider and name are fnmatch globs. Each file's notes
  // are cached (by path, mtime, size and inode) for the life of the process.
  MarkerQueryResult find(const MarkerQuery &q);

  // The canonical path of the executable a process("NAME") argument names: with a '/'
  // relative to the cwd, else searched in $PATH (like stap/execvp); realpath'd;
  // nullopt + error text if missing or not an ELF file.
  static std::optional<std::string> resolveExecutable(const std::string &name, std::string &error);

  // The executable running as process `pid` (-x PID, process(PID)): its
  // /proc/PID/exe, canonical; nullopt + error text if there is no such process
  // or it cannot be read.
  static std::optional<std::string> executableOfProcess(int64_t pid, std::string &error);

  // The files a process("PATTERN") glob (`/usr/bin/python3*`) names, as stap
  // expands it: every ELF file matching, canonical, each once, sorted; nullopt +
  // error text naming the pattern when none does.
  static std::optional<std::vector<std::string>> expandProcessGlob(const std::string &pattern,
                                                                   std::string &error);

  // Whether a process("...") argument is a glob to expand rather than a path.
  static bool isProcessGlob(const std::string &process);

  // The marker name a script's mark("NAME") looks up: dtrace spells "__" in
  // marker names as "-" (`gc-start` for `gc__start`), and so may the script.
  static std::string scriptMarkerName(const std::string &written);

  // The program a -c command runs: its first word as wordexp splits it (the way sonde
  // execs it), "" if there is none or the command does not split.
  static std::string commandProgram(const std::string &command);
};

} // namespace sonde::probes::marker
