// Address symbolization: stap's text forms of a resolved address, the symbol
// table's lookups, and resolution of this test's own functions.
#include "runtime/symbols/AddressSymbol.h"
#include "runtime/symbols/ElfSymbolTable.h"
#include "runtime/symbols/ProcessSymbols.h"
#include "runtime/symbols/SourceLines.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace sonde::symbols {
namespace {

AddressSymbol inMain() {
  AddressSymbol s;
  s.address = 0x4005d6;
  s.module = "/usr/bin/app";
  s.moduleOffset = 0x5d6;
  s.moduleSize = 0x2000;
  s.name = "main";
  s.offset = 0x16;
  s.size = 0x30;
  return s;
}

TEST(SymbolText, EveryStyleOfANamedAddress) {
  AddressSymbol s = inMain();
  EXPECT_EQ(formatSymbol(s, SymbolStyle::Name), "main");
  EXPECT_EQ(formatSymbol(s, SymbolStyle::Data), "main+0x16/0x30 [/usr/bin/app]");
  EXPECT_EQ(formatSymbol(s, SymbolStyle::Full), " 0x4005d6 : main+0x16/0x30 [/usr/bin/app]\n");
  EXPECT_EQ(formatSymbol(s, SymbolStyle::Simple), "main+0x16 [app]\n");
  EXPECT_EQ(formatSymbol(s, SymbolStyle::Brief), "main+0x16\n");
}

TEST(SymbolText, ModuleWithoutSymbolGivesTheModuleOffset) {
  AddressSymbol s = inMain();
  s.name.clear();
  EXPECT_EQ(formatSymbol(s, SymbolStyle::Name), "0x4005d6");
  EXPECT_EQ(formatSymbol(s, SymbolStyle::Data), "0x4005d6 [/usr/bin/app+0x5d6/0x2000]");
  EXPECT_EQ(formatSymbol(s, SymbolStyle::Full), " 0x4005d6 [/usr/bin/app+0x5d6/0x2000]\n");
  EXPECT_EQ(formatSymbol(s, SymbolStyle::Simple), "0x4005d6 [app+0x5d6]\n");
  EXPECT_EQ(formatSymbol(s, SymbolStyle::Brief), "0x4005d6\n");
}

TEST(SymbolText, UnknownAddressIsHex) {
  AddressSymbol s;
  s.address = 0xc;
  for (SymbolStyle style : {SymbolStyle::Name, SymbolStyle::Data})
    EXPECT_EQ(formatSymbol(s, style), "0xc");
  EXPECT_EQ(formatSymbol(s, SymbolStyle::Full), " 0xc\n");
  EXPECT_EQ(formatSymbol(s, SymbolStyle::Simple), "0xc\n");
}

TEST(ElfSymbolTable, ContainingFindsTheEnclosingSymbol) {
  ElfSymbolTable t({{0x1000, 0x40, "first", true},
                    {0x1040, 0x10, "second", false},
                    {0x2000, 0x1000, "big", true},
                    {0x2100, 0x20, "nested", false},
                    {0x3000, 0, "marker", true}});
  EXPECT_EQ(t.containing(0xfff), nullptr);
  EXPECT_EQ(t.containing(0x1000)->name, "first");
  EXPECT_EQ(t.containing(0x103f)->name, "first");
  EXPECT_EQ(t.containing(0x1040)->name, "second");
  EXPECT_EQ(t.containing(0x1050), nullptr) << "past the end of second";
  EXPECT_EQ(t.containing(0x2110)->name, "nested");
  EXPECT_EQ(t.containing(0x2200)->name, "big") << "after nested, still inside big";
  EXPECT_EQ(t.containing(0x3000)->name, "marker") << "a size-0 symbol holds its own address";
  EXPECT_EQ(t.containing(0x3001), nullptr);
}

TEST(ElfSymbolTable, AliasesKeepTheGlobalShortName) {
  ElfSymbolTable t({{0x10, 8, "__libc_start_main_alias_2", true},
                    {0x10, 8, "local_name", false},
                    {0x10, 8, "__libc_start_main", true}});
  EXPECT_EQ(t.size(), 1u);
  EXPECT_EQ(t.containing(0x12)->name, "__libc_start_main");
}

__attribute__((noinline)) int symbolizedFunction(int x) { return x * 3 + 1; }

TEST(ProcessSymbols, ResolvesAFunctionOfThisExecutable) {
  auto address = reinterpret_cast<uintptr_t>(&symbolizedFunction) + 1;
  AddressSymbol s = resolveInThisProcess(address);
  EXPECT_NE(s.name.find("symbolizedFunction"), std::string::npos) << s.name;
  EXPECT_EQ(s.offset, 1u);
  EXPECT_GT(s.size, 1u);
  EXPECT_NE(s.module.find("sonde_runtime_tests"), std::string::npos) << s.module;
  EXPECT_EQ(resolveInThisProcess(8).module, "");
}

TEST(SourceLines, LineOfAFunctionOfThisExecutable) {
  std::string error;
  SourceLine s = sourceLineInThisProcess(reinterpret_cast<uintptr_t>(&symbolizedFunction), &error);
  ASSERT_EQ(error, "");
  EXPECT_NE(s.file.find("SymbolsTest.cpp"), std::string::npos) << s.file;
  EXPECT_GT(s.line, 0);
  EXPECT_EQ(sourceLineInThisProcess(8, &error).file, "");
}

TEST(LoadedObjects, TextRoundTripsAndSkipsJunk) {
  std::vector<LoadedObject> objects = {
      {"/usr/lib/lib with space.so", 0x7f0000000000, 0x7f0000001000, 0x7f0000009000},
      {"/usr/bin/app", 0, 0x400000, 0x401000}};
  std::string text = serializeObjects(objects);
  EXPECT_EQ(text, "7f0000001000 7f0000009000 7f0000000000 /usr/lib/lib with space.so\n"
                  "400000 401000 0 /usr/bin/app\n");
  std::vector<LoadedObject> back = parseObjects("junk\n" + text + "1 0 0 /inverted\n");
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[0].path, objects[0].path);
  EXPECT_EQ(back[0].bias, objects[0].bias);
  EXPECT_EQ(back[1].end, objects[1].end);
  EXPECT_EQ(objectHolding(back, 0x400800)->path, "/usr/bin/app");
  EXPECT_EQ(objectHolding(back, 0x401000), nullptr);
}

TEST(SymbolText, StackLinesInEachStyle) {
  auto resolve = [](uint64_t a) {
    AddressSymbol s;
    s.address = a;
    s.module = "/bin/x";
    s.name = a == 0x10 ? "f" : "g";
    s.offset = 1;
    s.size = 8;
    return s;
  };
  EXPECT_EQ(formatStack("0x10 0x20 ", SymbolStyle::Brief, 0, resolve), "f+0x1\ng+0x1\n");
  EXPECT_EQ(formatStack("0x10  0x20", SymbolStyle::Full, 0, resolve),
            " 0x10 : f+0x1/0x8 [/bin/x]\n 0x20 : g+0x1/0x8 [/bin/x]\n");
  EXPECT_EQ(formatStack("0X10", SymbolStyle::Saved, 0, resolve), " 0X10 : f+0x1/0x8 [/bin/x]\n")
      << "print_ustack shows the address as saved";
  EXPECT_EQ(formatStack("0x10 0x20", SymbolStyle::Brief, 8, resolve), "f+0x1\n")
      << "only whole lines fit";
  EXPECT_EQ(formatStack("", SymbolStyle::Full, 0, resolve), "");
}

} // namespace
} // namespace sonde::symbols
