// parseTracepointFormat on format files as this kernel writes them (copied
// here), on every format file of the machine's tracefs, and on broken ones.
#include "probes/tracepoint/TracepointFormat.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace sonde::probes::tracepoint {
namespace {

using K = TracepointFieldKind;

const char kSchedSwitch[] =
    "name: sched_switch\n"
    "ID: 372\n"
    "format:\n"
    "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
    "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
    "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
    "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
    "\n"
    "\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
    "\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n"
    "\tfield:int prev_prio;\toffset:28;\tsize:4;\tsigned:1;\n"
    "\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n"
    "\tfield:char next_comm[16];\toffset:40;\tsize:16;\tsigned:0;\n"
    "\tfield:pid_t next_pid;\toffset:56;\tsize:4;\tsigned:1;\n"
    "\tfield:int next_prio;\toffset:60;\tsize:4;\tsigned:1;\n"
    "\n"
    "print fmt: \"prev_comm=%s prev_pid=%d\", REC->prev_comm, REC->prev_pid\n";

const char kProcessExec[] = "name: sched_process_exec\n"
                            "ID: 365\n"
                            "format:\n"
                            "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
                            "\n"
                            "\tfield:__data_loc char[] filename;\toffset:8;\tsize:4;\tsigned:0;\n"
                            "\tfield:pid_t pid;\toffset:12;\tsize:4;\tsigned:1;\n"
                            "\tfield:pid_t old_pid;\toffset:16;\tsize:4;\tsigned:1;\n"
                            "\n"
                            "print fmt: \"filename=%s\", __get_str(filename)\n";

const char kEnterOpenat[] = "name: sys_enter_openat\n"
                            "ID: 640\n"
                            "format:\n"
                            "\tfield:int __syscall_nr;\toffset:8;\tsize:4;\tsigned:1;\n"
                            "\tfield:int dfd;\toffset:16;\tsize:8;\tsigned:0;\n"
                            "\tfield:const char * filename;\toffset:24;\tsize:8;\tsigned:0;\n"
                            "\tfield:unsigned long args[6];\toffset:32;\tsize:48;\tsigned:0;\n"
                            "\tfield:__u8 saddr[4];\toffset:80;\tsize:4;\tsigned:0;\n"
                            "\tfield:struct in6_addr daddr;\toffset:84;\tsize:16;\tsigned:0;\n";

TracepointFormat parsed(const char *text) {
  std::string error;
  auto format = parseTracepointFormat(text, &error);
  EXPECT_TRUE(format) << error;
  return format ? *format : TracepointFormat{};
}

TEST(TracepointFormat, IntegersAndCharArrays) {
  TracepointFormat f = parsed(kSchedSwitch);
  EXPECT_EQ(f.name, "sched_switch");
  EXPECT_EQ(f.id, 372u);
  ASSERT_EQ(f.fields.size(), 11u);
  EXPECT_TRUE(f.fields[0].common);
  EXPECT_EQ(f.fields[0].kind, K::Integer);
  EXPECT_EQ(f.fields[0].size, 2u);
  EXPECT_FALSE(f.fields[0].isSigned);
  const TracepointField &comm = f.fields[4];
  EXPECT_EQ(comm.name, "prev_comm");
  EXPECT_EQ(comm.type, "char[16]");
  EXPECT_EQ(comm.kind, K::CharArray);
  EXPECT_EQ(comm.count, 16u);
  EXPECT_EQ(comm.offset, 8u);
  EXPECT_FALSE(comm.common);
  const TracepointField &state = f.fields[7];
  EXPECT_EQ(state.name, "prev_state");
  EXPECT_EQ(state.type, "long");
  EXPECT_EQ(state.kind, K::Integer);
  EXPECT_EQ(state.offset, 32u);
  EXPECT_EQ(state.size, 8u);
  EXPECT_TRUE(state.isSigned);
}

TEST(TracepointFormat, DynamicStrings) {
  TracepointFormat f = parsed(kProcessExec);
  ASSERT_EQ(f.fields.size(), 4u);
  const TracepointField &file = f.fields[1];
  EXPECT_EQ(file.name, "filename");
  EXPECT_EQ(file.type, "char[]");
  EXPECT_EQ(file.kind, K::DynamicString);
  EXPECT_EQ(file.offset, 8u);
  EXPECT_EQ(file.size, 4u);
  EXPECT_EQ(f.fields[3].name, "old_pid");
}

TEST(TracepointFormat, PointersArraysAndOtherSizes) {
  TracepointFormat f = parsed(kEnterOpenat);
  ASSERT_EQ(f.fields.size(), 6u);
  EXPECT_EQ(f.fields[0].name, "__syscall_nr");
  EXPECT_FALSE(f.fields[0].common);
  EXPECT_EQ(f.fields[1].kind, K::Integer); // int dfd stored in 8 bytes
  EXPECT_EQ(f.fields[2].name, "filename");
  EXPECT_EQ(f.fields[2].type, "const char *");
  EXPECT_EQ(f.fields[2].kind, K::Pointer);
  EXPECT_EQ(f.fields[3].kind, K::Array);
  EXPECT_EQ(f.fields[3].count, 6u);
  EXPECT_EQ(f.fields[3].type, "unsigned long[6]");
  EXPECT_EQ(f.fields[4].kind, K::Array);
  EXPECT_EQ(f.fields[4].count, 4u);
  EXPECT_EQ(f.fields[5].kind, K::Other); // a 16-byte struct
}

// Syscall events keep every argument in 8 bytes, unsigned: $field reads the
// declared C type (an `int dfd` of AT_FDCWD is -100, not 4294967196).
TEST(TracepointFormat, SyscallArgumentsReadAsTheirDeclaredType) {
  std::string error;
  auto f = parseTracepointFormat("name: sys_enter_openat\nID: 700\nformat:\n"
                                 "\tfield:int __syscall_nr;\toffset:8;\tsize:4;\tsigned:1;\n"
                                 "\tfield:int dfd;\toffset:16;\tsize:8;\tsigned:0;\n"
                                 "\tfield:const char * filename;\toffset:24;\tsize:8;\tsigned:0;\n"
                                 "\tfield:umode_t mode;\toffset:32;\tsize:8;\tsigned:0;\n"
                                 "\tfield:unsigned int fd;\toffset:40;\tsize:8;\tsigned:0;\n"
                                 "\tfield:const clockid_t which;\toffset:48;\tsize:8;\tsigned:0;\n"
                                 "\tfield:unsigned long len;\toffset:56;\tsize:8;\tsigned:0;\n",
                                 &error);
  ASSERT_TRUE(f) << error;
  ASSERT_EQ(f->fields.size(), 7u);
  auto expect = [&](size_t i, uint32_t size, bool isSigned) {
    EXPECT_EQ(f->fields[i].size, size) << f->fields[i].name;
    EXPECT_EQ(f->fields[i].isSigned, isSigned) << f->fields[i].name;
    EXPECT_EQ(f->fields[i].offset, 8u * (i + 1)) << f->fields[i].name;
  };
  expect(1, 4, true);
  expect(2, 8, false);
  expect(3, 2, false);
  expect(4, 4, false);
  expect(5, 4, true);
  expect(6, 8, false);
  EXPECT_EQ(f->fields[2].kind, K::Pointer);
}

TEST(TracepointFormat, BrokenFilesNameTheLine) {
  std::string error;
  EXPECT_FALSE(parseTracepointFormat("name: x\nID: 1\nfield:int a;\toffset:0;\n", &error));
  EXPECT_EQ(error, "line 3: field without a numeric offset and size");
  EXPECT_FALSE(parseTracepointFormat("name: x\nID: seven\n", &error));
  EXPECT_EQ(error, "line 2: the ID is not a number");
  EXPECT_FALSE(parseTracepointFormat("name: x\n", &error));
  EXPECT_EQ(error, "line 2: no ID: line");
  EXPECT_FALSE(
      parseTracepointFormat("name: x\nID: 1\nfield:char a[N];\toffset:0;\tsize:4;\n", &error));
  EXPECT_EQ(error, "line 3: array size '[N]' of field a is not a number");
  EXPECT_FALSE(parseTracepointFormat("name: x\nID: 1\nfield:int;\toffset:0;\tsize:4;\n", &error));
  EXPECT_EQ(error, "line 3: expected a type and a field name in 'int'");
}

// Every event this kernel has parses, with fields inside their records.
TEST(TracepointFormat, EveryFormatOfThisKernel) {
  std::filesystem::path events = "/sys/kernel/tracing/events";
  std::error_code ec;
  if (!std::filesystem::exists(events / "sched", ec))
    GTEST_SKIP() << "tracefs is not mounted at /sys/kernel/tracing";
  size_t files = 0;
  for (const auto &entry : std::filesystem::recursive_directory_iterator(events, ec)) {
    if (entry.path().filename() != "format" || entry.path().parent_path() == events)
      continue;
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    std::string error;
    auto format = parseTracepointFormat(text.str(), &error);
    ASSERT_TRUE(format) << entry.path() << ": " << error;
    ++files;
    for (const TracepointField &f : format->fields)
      EXPECT_FALSE(f.name.empty()) << entry.path();
  }
  EXPECT_GT(files, 100u);
}

} // namespace
} // namespace sonde::probes::tracepoint
