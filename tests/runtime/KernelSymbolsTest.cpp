// Kernel symbol lookups from kallsyms text: the nearest symbol before an
// address, its size up to the next symbol, the module column.
#include "runtime/symbols/KernelSymbols.h"

#include <gtest/gtest.h>

namespace sonde::symbols {
namespace {

const char *const kKallsyms = "ffffffff81000000 T _stext\n"
                              "ffffffff81000000 T _text\n"
                              "ffffffff81001000 t do_work\n"
                              "ffffffff81001100 D some_data\n"
                              "ffffffff81001200 W weak_fn\n"
                              "0000000000000000 T hidden\n"
                              "ffffffffc0201000 t mod_fn\t[e1000]\n"
                              "ffffffffc0202000 t mod_end\t[e1000]\n"
                              "junk\n";

TEST(KernelSymbols, NearestSymbolWithTheDistanceToTheNextAsSize) {
  KernelSymbolTable t = KernelSymbolTable::parse(kKallsyms);
  EXPECT_EQ(t.size(), 6u) << "text and weak symbols only; hidden (0) ones dropped";
  AddressSymbol s = t.resolve(0xffffffff81001010);
  EXPECT_EQ(s.name, "do_work");
  EXPECT_EQ(s.offset, 0x10u);
  EXPECT_EQ(s.size, 0x200u) << "data symbols do not cut functions short";
  EXPECT_EQ(s.module, "kernel");
  EXPECT_EQ(formatSymbol(s, SymbolStyle::Data), "do_work+0x10/0x200 [kernel]");
  EXPECT_EQ(t.resolve(0xffffffff81000004).name, "_stext") << "the first listed of aliases";
  AddressSymbol m = t.resolve(0xffffffffc0201008);
  EXPECT_EQ(formatSymbol(m, SymbolStyle::Full),
            " 0xffffffffc0201008 : mod_fn+0x8/0x1000 [e1000]\n");
  EXPECT_EQ(formatSymbol(t.resolve(0x10), SymbolStyle::Name), "0x10");
  EXPECT_EQ(formatSymbol(t.resolve(0xffffffffc0203000), SymbolStyle::Name), "0xffffffffc0203000")
      << "past the last symbol its size is unknown";
}

} // namespace
} // namespace sonde::symbols
