// stock_sites FILE...: for every stock <sys/sdt.h> site (1-byte NOP) of each
// ELF file, what StockSiteAnalysis decides (issue 21), one tab-separated line:
//   FILE PC PROVIDER:NAME FUNCTION-START jump|trap LENGTH|REASON DETAIL
// DETAIL is the displaced instructions ("; "-separated, each with its
// relocation kind) or the refusal's text. 5-byte sonde/sdt.h sites are left
// out. Exit status 1 if a file cannot be read.
#include "codegen/StockSiteAnalysis.h"
#include "probes/marker/SdtNoteReader.h"

#include <cstdio>
#include <string>

namespace {

const char *kindName(sonde::codegen::DisplacedKind kind) {
  switch (kind) {
  case sonde::codegen::DisplacedKind::Copy: return "copy";
  case sonde::codegen::DisplacedKind::RipRelative: return "rip";
  case sonde::codegen::DisplacedKind::Branch: return "branch";
  case sonde::codegen::DisplacedKind::Return: return "ret";
  case sonde::codegen::DisplacedKind::Call: return "call";
  }
  return "?";
}

} // namespace

int main(int argc, char **argv) {
  using namespace sonde;
  int status = 0;
  for (int f = 1; f < argc; ++f) {
    std::string error;
    auto sites = probes::marker::SdtNoteReader::read(argv[f], error);
    if (!sites) {
      std::fprintf(stderr, "stock_sites: %s\n", error.c_str());
      status = 1;
      continue;
    }
    codegen::StockSiteAnalysis analysis(argv[f]);
    for (const probes::marker::MarkerSite &site : *sites) {
      if (site.nop == probes::marker::SiteNop::FiveByte)
        continue;
      codegen::StockSiteDecision d = analysis.analyse(site.pc);
      std::printf("%s\t0x%llx\t%s:%s\t0x%llx\t", argv[f], (unsigned long long)site.pc,
                  site.provider.c_str(), site.name.c_str(), (unsigned long long)d.functionStart);
      if (d.plan) {
        std::string detail;
        for (const codegen::DisplacedInstruction &i : d.plan->instructions)
          detail += (detail.empty() ? "" : "; ") + i.text + " [" + kindName(i.kind) + "]";
        std::printf("jump\t%u\t%s\n", d.plan->length, detail.c_str());
      } else {
        std::printf("trap\t%s\t%s\n", codegen::refusalName(d.refusal), d.reason.c_str());
      }
    }
  }
  return status;
}
