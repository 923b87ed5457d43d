// Which vector state each marker of tests/unit/fixtures/vector_sites.c needs
// saved: the marker's name starts with the answer (args_, sse_ or full_).
#include "codegen/SiteVectorAnalysis.h"
#include "probes/marker/SdtNoteReader.h"

#include <gtest/gtest.h>

#include <string>

namespace sonde::codegen {
namespace {

void expectMarkerNamesAnswered(const std::string &path) {
  std::string error;
  auto sites = probes::marker::SdtNoteReader::read(path, error);
  ASSERT_TRUE(sites) << error;
  ASSERT_EQ(sites->size(), 10u);
  SiteVectorAnalysis analysis(path);
  for (const probes::marker::MarkerSite &s : *sites) {
    SiteVectorSave want = s.name.rfind("args_", 0) == 0  ? SiteVectorSave::Args
                          : s.name.rfind("sse_", 0) == 0 ? SiteVectorSave::Sse
                                                         : SiteVectorSave::Full;
    EXPECT_EQ(analysis.saveFor(s.pc), want) << path << ": " << s.name;
  }
}

TEST(SiteVectorAnalysis, FunctionsFromTheSymbolTable) { expectMarkerNamesAnswered(VECTOR_SITES); }

TEST(SiteVectorAnalysis, FunctionsFromEhFrameWhenStripped) {
  expectMarkerNamesAnswered(VECTOR_SITES_STRIPPED);
}

TEST(SiteVectorAnalysis, UnknownCodeNeedsEverythingSaved) {
  SiteVectorAnalysis missing("/nonexistent/binary");
  EXPECT_EQ(missing.saveFor(0x1000), SiteVectorSave::Full);
  SiteVectorAnalysis notElf(SONDE_TEST_DIR "/unit/fixtures/vector_sites.c");
  EXPECT_EQ(notElf.saveFor(0x1000), SiteVectorSave::Full);
  // An address outside any function of a real object.
  SiteVectorAnalysis real(VECTOR_SITES);
  EXPECT_EQ(real.saveFor(0x10), SiteVectorSave::Full);
}

} // namespace
} // namespace sonde::codegen
