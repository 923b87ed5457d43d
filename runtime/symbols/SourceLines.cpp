#include "runtime/symbols/SourceLines.h"

#include <dlfcn.h>
#include <elfutils/libdwfl.h>
#include <mutex>
#include <unistd.h>

namespace sonde::symbols {

namespace {

// The dwfl entry points this file needs, looked up in a private libdw.
struct DwflApi {
  decltype(&dwfl_begin) begin = nullptr;
  decltype(&dwfl_report_begin) reportBegin = nullptr;
  decltype(&dwfl_linux_proc_report) procReport = nullptr;
  decltype(&dwfl_report_end) reportEnd = nullptr;
  decltype(&dwfl_getsrc) getsrc = nullptr;
  decltype(&dwfl_lineinfo) lineinfo = nullptr;
  decltype(&dwfl_addrmodule) addrmodule = nullptr;
  decltype(&dwfl_module_getdwarf) getdwarf = nullptr;
  decltype(&dwarf_nextcu) nextcu = nullptr;
  decltype(&dwarf_offdie) offdie = nullptr;
  decltype(&dwarf_haspc) haspc = nullptr;
  decltype(&dwarf_getsrc_die) getsrcDie = nullptr;
  decltype(&dwarf_linesrc) linesrc = nullptr;
  decltype(&dwarf_lineno) lineno = nullptr;
  Dwfl_Callbacks callbacks{};
  char *debuginfoPath = nullptr;
  std::string error;
};

template <typename F> bool bind(void *lib, const char *name, F &f) {
  f = reinterpret_cast<F>(dlsym(lib, name));
  return f != nullptr;
}

const DwflApi &dwflLibrary() {
  static DwflApi d;
  static std::once_flag once;
  std::call_once(once, [] {
    void *lib = dlopen("libdw.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      d.error = std::string("cannot load libdw: ") + dlerror();
      return;
    }
    bool ok = bind(lib, "dwfl_begin", d.begin) && bind(lib, "dwfl_report_begin", d.reportBegin) &&
              bind(lib, "dwfl_linux_proc_report", d.procReport) &&
              bind(lib, "dwfl_report_end", d.reportEnd) && bind(lib, "dwfl_getsrc", d.getsrc) &&
              bind(lib, "dwfl_lineinfo", d.lineinfo) &&
              bind(lib, "dwfl_addrmodule", d.addrmodule) &&
              bind(lib, "dwfl_module_getdwarf", d.getdwarf) &&
              bind(lib, "dwarf_nextcu", d.nextcu) && bind(lib, "dwarf_offdie", d.offdie) &&
              bind(lib, "dwarf_haspc", d.haspc) && bind(lib, "dwarf_getsrc_die", d.getsrcDie) &&
              bind(lib, "dwarf_linesrc", d.linesrc) && bind(lib, "dwarf_lineno", d.lineno) &&
              bind(lib, "dwfl_linux_proc_find_elf", d.callbacks.find_elf) &&
              bind(lib, "dwfl_standard_find_debuginfo", d.callbacks.find_debuginfo);
    if (!ok) {
      d.error = "libdw.so.1 lacks the dwfl functions";
      d.begin = nullptr;
    }
    d.callbacks.debuginfo_path = &d.debuginfoPath;
  });
  return d;
}

// This process's objects as dwfl modules; re-reported when an address falls
// in none of them (a library opened since).
class LineResolver {
public:
  explicit LineResolver(const DwflApi &d) : d_(d), dwfl_(d.begin(&d.callbacks)) { report(); }

  SourceLine resolve(uint64_t address) {
    std::lock_guard<std::mutex> g(lock_);
    SourceLine s;
    if (!dwfl_)
      return s;
    Dwfl_Module *module = d_.addrmodule(dwfl_, address);
    if (!module) {
      report();
      module = d_.addrmodule(dwfl_, address);
    }
    if (!module)
      return s;
    int lineNumber = 0;
    const char *file = nullptr;
    if (Dwfl_Line *line = d_.getsrc(dwfl_, address))
      file = d_.lineinfo(line, nullptr, &lineNumber, nullptr, nullptr, nullptr);
    else if (Dwarf_Line *l = scanUnits(module, address)) {
      file = d_.linesrc(l, nullptr, nullptr);
      d_.lineno(l, &lineNumber);
    }
    if (file)
      s.file = file;
    s.line = lineNumber;
    return s;
  }

private:
  // dwfl_getsrc finds the unit through .debug_aranges, which clang does not
  // emit: then look through the module's units for the one holding `address`.
  Dwarf_Line *scanUnits(Dwfl_Module *module, uint64_t address) {
    Dwarf_Addr bias = 0;
    Dwarf *dwarf = d_.getdwarf(module, &bias);
    if (!dwarf)
      return nullptr;
    Dwarf_Off offset = 0, next = 0;
    size_t headerSize = 0;
    while (d_.nextcu(dwarf, offset, &next, &headerSize, nullptr, nullptr, nullptr) == 0) {
      Dwarf_Die unit;
      if (d_.offdie(dwarf, offset + headerSize, &unit) && d_.haspc(&unit, address - bias) > 0)
        return d_.getsrcDie(&unit, address - bias);
      offset = next;
    }
    return nullptr;
  }

  void report() {
    if (!dwfl_)
      return;
    d_.reportBegin(dwfl_);
    d_.procReport(dwfl_, getpid());
    d_.reportEnd(dwfl_, nullptr, nullptr);
  }

  const DwflApi &d_;
  ::Dwfl *dwfl_;
  std::mutex lock_;
};

} // namespace

SourceLine sourceLineInThisProcess(uint64_t address, std::string *error) {
  const DwflApi &d = dwflLibrary();
  if (!d.begin) {
    *error = d.error;
    return {};
  }
  // Never destroyed: exit-time probes may still ask after static destructors.
  static LineResolver *resolver = new LineResolver(d);
  return resolver->resolve(address);
}

} // namespace sonde::symbols
