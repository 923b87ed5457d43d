// The user_* memory built-ins (runtime/session/BuiltinsUserMemory.cpp) called
// directly, with a context on a real runtime (a compiled empty module, its segment,
// an error pipe), on this process's memory: valid data, NULL, a PROT_NONE page, a
// string that ends at a page boundary, strings past MAXSTRINGLEN; then through
// `sonde -e` end to end.
#include "CodegenTestSupport.h"

#include "runtime/session/BuiltinAbi.h"
#include "runtime/session/LoadedModule.h"
#include "runtime/session/Runtime.h"

#include <gtest/gtest.h>

#include <cinttypes>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <sys/mman.h>
#include <unistd.h>

namespace sonde::test {
namespace {

constexpr uint32_t kLoc = 7;

class UserMemoryTest : public testing::Test {
protected:
  void SetUp() override {
    compiled_ = CompiledModule::compile("probe begin {}");
    ASSERT_TRUE(compiled_ && compiled_->ok()) << (compiled_ ? compiled_->diagnostics() : "");
    std::string error;
    module_ = session::LoadedModule::open(compiled_->path(), &error);
    ASSERT_TRUE(module_) << error;
    segment_ = values::Segment::create(module_->layout(), &error);
    ASSERT_TRUE(segment_) << error;
    ASSERT_EQ(pipe2(errors_, O_CLOEXEC | O_NONBLOCK), 0);
    sink_.emplace(open("/dev/null", O_WRONLY | O_CLOEXEC));
    rt_.module = &*module_;
    rt_.segment = &*segment_;
    rt_.output = &*sink_;
    rt_.errorFd = errors_[1];
    message_.assign(cap(), '\0');
    out_.assign(cap(), '\0');
    ctx_.segment = segment_->abi();
    ctx_.error_message = message_.data();
    ctx_.runtime = &rt_;
    ctx_.thread = &rt_.thread();

    long pageSize = sysconf(_SC_PAGESIZE);
    page_ = static_cast<size_t>(pageSize);
    // Two pages: the first readable, the second not.
    pages_ = static_cast<char *>(
        mmap(nullptr, 2 * page_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    ASSERT_NE(pages_, MAP_FAILED);
    ASSERT_EQ(mprotect(pages_ + page_, page_, PROT_NONE), 0);
  }

  void TearDown() override {
    if (pages_ && pages_ != MAP_FAILED)
      munmap(pages_, 2 * page_);
    if (sink_)
      close(sink_->fd());
    close(errors_[0]);
    close(errors_[1]);
  }

  size_t cap() const { return module_->layout().limits().max_string_len; }
  static int64_t addr(const void *p) {
    return static_cast<int64_t>(reinterpret_cast<uintptr_t>(p));
  }
  static std::string hex(const void *p) {
    char text[32];
    std::snprintf(text, sizeof text, "0x%" PRIxPTR, reinterpret_cast<uintptr_t>(p));
    return text;
  }
  std::string out() const { return out_.data(); }
  std::string error() const { return ctx_.error ? message_.data() : ""; }
  std::string warnings() {
    char buffer[4096];
    ssize_t n = read(errors_[0], buffer, sizeof buffer);
    return n > 0 ? std::string(buffer, static_cast<size_t>(n)) : "";
  }
  void clearError() {
    ctx_.error = 0;
    ctx_.error_location = 0;
    message_.assign(cap(), '\0');
  }
  // The last page's tail: `text` placed so that its NUL is the page's last byte.
  const char *atPageEnd(const std::string &text) {
    char *at = pages_ + page_ - text.size() - 1;
    std::memcpy(at, text.c_str(), text.size() + 1);
    return at;
  }

  std::unique_ptr<CompiledModule> compiled_;
  std::optional<session::LoadedModule> module_;
  std::optional<values::Segment> segment_;
  std::optional<session::OutputSink> sink_;
  session::Runtime rt_;
  int errors_[2] = {-1, -1};
  std::vector<char> message_, out_;
  sonde_context ctx_{};
  char *pages_ = nullptr;
  size_t page_ = 0;
};

TEST_F(UserMemoryTest, StringAtValidAddress) {
  static const char text[] = "hello, marker";
  sonde_fn_user_string_1(&ctx_, out_.data(), addr(text), kLoc);
  EXPECT_EQ(error(), "");
  EXPECT_EQ(out(), "hello, marker");
  sonde_fn_user_string_n_2(&ctx_, out_.data(), addr(text), 5, kLoc);
  EXPECT_EQ(out(), "hello");
  sonde_fn_user_string_n_2(&ctx_, out_.data(), addr(text), 0, kLoc);
  EXPECT_EQ(out(), "");
  sonde_fn_user_string_n_2(&ctx_, out_.data(), addr(text), -3, kLoc);
  EXPECT_EQ(out(), "");
  sonde_fn_user_string_n_2(&ctx_, out_.data(), addr(text), 100, kLoc);
  EXPECT_EQ(out(), "hello, marker");
  EXPECT_EQ(error(), "");
}

TEST_F(UserMemoryTest, NullAddressRaisesStapsFault) {
  sonde_fn_user_string_1(&ctx_, out_.data(), 0, kLoc);
  EXPECT_EQ(error(), "user string copy fault -14 at 0x0 [man error::fault]");
  EXPECT_EQ(ctx_.error_location, kLoc);
  EXPECT_EQ(ctx_.uncatchable, 0); // try/catch can handle it
  clearError();
  sonde_fn_user_string_n_2(&ctx_, out_.data(), 0x1234, 4, kLoc);
  EXPECT_EQ(error(), "user string copy fault -14 at 0x1234 [man error::fault]");
}

TEST_F(UserMemoryTest, UnmappedPageRaisesWithItsAddress) {
  const char *bad = pages_ + page_ + 16;
  sonde_fn_user_string_1(&ctx_, out_.data(), addr(bad), kLoc);
  EXPECT_EQ(error(), "user string copy fault -14 at " + hex(bad) + " [man error::fault]");
}

TEST_F(UserMemoryTest, StringEndingAtAPageBoundaryIsReadWhole) {
  const char *text = atPageEnd("edge of the mapping");
  sonde_fn_user_string_1(&ctx_, out_.data(), addr(text), kLoc);
  EXPECT_EQ(error(), "");
  EXPECT_EQ(out(), "edge of the mapping");
  // Without its NUL the string runs into the unreadable page: a fault.
  pages_[page_ - 1] = 'x';
  sonde_fn_user_string_1(&ctx_, out_.data(), addr(text), kLoc);
  EXPECT_EQ(error(), "user string copy fault -14 at " + hex(text) + " [man error::fault]");
  // ... unless n stops the copy before it.
  clearError();
  sonde_fn_user_string_n_2(&ctx_, out_.data(), addr(text), 4, kLoc);
  EXPECT_EQ(error(), "");
  EXPECT_EQ(out(), "edge");
}

TEST_F(UserMemoryTest, LongStringsAreCutAsStapCutsThem) {
  // uconversions.stp copies at most MAXSTRINGLEN - 1 bytes and ends the string at
  // the last of them: MAXSTRINGLEN - 2 characters.
  std::string longText(3 * cap(), 'x');
  sonde_fn_user_string_1(&ctx_, out_.data(), addr(longText.c_str()), kLoc);
  EXPECT_EQ(error(), "");
  EXPECT_EQ(out(), std::string(cap() - 2, 'x'));
  sonde_fn_user_string_n_2(&ctx_, out_.data(), addr(longText.c_str()), 1000000, kLoc);
  EXPECT_EQ(out().size(), cap() - 2);
  sonde_fn_user_string_n_2(&ctx_, out_.data(), addr(longText.c_str()), 100, kLoc);
  EXPECT_EQ(out(), std::string(100, 'x'));
}

TEST_F(UserMemoryTest, ErrorMessageVariantsReturnItInstead) {
  static const char text[] = "fine";
  sonde_fn_user_string_2(&ctx_, out_.data(), 0, "<bad>", kLoc);
  EXPECT_EQ(error(), "");
  EXPECT_EQ(out(), "<bad>");
  sonde_fn_user_string_2(&ctx_, out_.data(), addr(text), "<bad>", kLoc);
  EXPECT_EQ(out(), "fine");
  sonde_fn_user_string_n_3(&ctx_, out_.data(), addr(pages_ + page_), 3, "oops", kLoc);
  EXPECT_EQ(error(), "");
  EXPECT_EQ(out(), "oops");
  sonde_fn_user_string_n_3(&ctx_, out_.data(), addr(text), 2, "oops", kLoc);
  EXPECT_EQ(out(), "fi");
  EXPECT_EQ(warnings(), "");
}

TEST_F(UserMemoryTest, WarnVariantsWarnAndGoOn) {
  sonde_fn_user_string_warn_1(&ctx_, out_.data(), 0, kLoc);
  EXPECT_EQ(error(), "");
  EXPECT_EQ(out(), "");
  EXPECT_EQ(warnings(), "WARNING: user string copy fault -14 at 0x0 [man error::fault]\n");
  sonde_fn_user_string_warn_2(&ctx_, out_.data(), 0x10, "<unknown>", kLoc);
  EXPECT_EQ(out(), "<unknown>");
  EXPECT_EQ(warnings(), "WARNING: user string copy fault -14 at 0x10 [man error::fault]\n");
}

TEST_F(UserMemoryTest, QuotedForms) {
  static const char text[] = "a\"b\n";
  sonde_fn_user_string_quoted_1(&ctx_, out_.data(), addr(text), kLoc);
  EXPECT_EQ(out(), "\"a\\\"b\\n\"");
  sonde_fn_user_string_quoted_1(&ctx_, out_.data(), 0, kLoc);
  EXPECT_EQ(out(), "0x0"); // no error: the address instead
  sonde_fn_user_string_n_quoted_2(&ctx_, out_.data(), addr(text), 2, kLoc);
  EXPECT_EQ(out(), "\"a\\\"\"");
  sonde_fn_user_string_n_quoted_2(&ctx_, out_.data(), 0xdead, 2, kLoc);
  EXPECT_EQ(out(), "0xdead");
  EXPECT_EQ(error(), "");

  // Longer than MAXSTRINGLEN - 2 once quoted: cut and ended with `"...`, itself cut
  // to MAXSTRINGLEN - 1 bytes, as uconversions.stp's concatenation does.
  std::string longText(3 * cap(), 'y');
  sonde_fn_user_string_n_quoted_2(&ctx_, out_.data(), addr(longText.c_str()), 5000, kLoc);
  std::string whole(cap(), '\0');
  sonde_str_string_quoted(std::string(cap() - 2, 'y').c_str(), whole.data(), cap());
  std::string expected = std::string(whole.c_str()).substr(0, cap() - 4) + "\"...";
  EXPECT_EQ(out(), expected.substr(0, cap() - 1));
  EXPECT_EQ(out().size(), cap() - 1);
}

TEST_F(UserMemoryTest, IntegersBySizeAndSignedness) {
  alignas(8) static const unsigned char bytes[8] = {0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
  int64_t a = addr(bytes);
  EXPECT_EQ(sonde_fn_user_char_1(&ctx_, a, kLoc), -2);
  EXPECT_EQ(sonde_fn_user_int8_1(&ctx_, a, kLoc), -2);
  EXPECT_EQ(sonde_fn_user_uint8_1(&ctx_, a, kLoc), 0xfe);
  EXPECT_EQ(sonde_fn_user_short_1(&ctx_, a, kLoc), -2);
  EXPECT_EQ(sonde_fn_user_int16_1(&ctx_, a, kLoc), -2);
  EXPECT_EQ(sonde_fn_user_ushort_1(&ctx_, a, kLoc), 0xfffe);
  EXPECT_EQ(sonde_fn_user_uint16_1(&ctx_, a, kLoc), 0xfffe);
  EXPECT_EQ(sonde_fn_user_int_1(&ctx_, a, kLoc), -2);
  EXPECT_EQ(sonde_fn_user_int32_1(&ctx_, a, kLoc), -2);
  EXPECT_EQ(sonde_fn_user_uint32_1(&ctx_, a, kLoc), 0xfffffffe);
  EXPECT_EQ(sonde_fn_user_long_1(&ctx_, a, kLoc), -2);
  EXPECT_EQ(sonde_fn_user_ulong_1(&ctx_, a, kLoc), -2); // 2^64 - 2 as a long
  EXPECT_EQ(sonde_fn_user_int64_1(&ctx_, a, kLoc), -2);
  EXPECT_EQ(sonde_fn_user_uint64_1(&ctx_, a, kLoc), -2);
  EXPECT_EQ(sonde_fn_user_int_error_1(&ctx_, a + 1, kLoc), -1); // unaligned is fine
  EXPECT_EQ(error(), "");
}

TEST_F(UserMemoryTest, IntegerFaultsGiveZeroOrRaise) {
  EXPECT_EQ(sonde_fn_user_long_1(&ctx_, 0, kLoc), 0);
  EXPECT_EQ(sonde_fn_user_uint8_1(&ctx_, 8, kLoc), 0);
  EXPECT_EQ(error(), "");
  EXPECT_EQ(sonde_fn_user_long_error_1(&ctx_, 0, kLoc), 0);
  EXPECT_EQ(error(), "read fault [man error::fault] at 0x0");
  EXPECT_EQ(ctx_.error_location, kLoc);
  clearError();
  // A long whose last bytes lie in the unreadable page.
  const char *straddling = pages_ + page_ - 4;
  EXPECT_EQ(sonde_fn_user_int64_error_1(&ctx_, addr(straddling), kLoc), 0);
  EXPECT_EQ(error(), "read fault [man error::fault] at " + hex(straddling));
  clearError();
  EXPECT_EQ(sonde_fn_user_int32_error_1(&ctx_, addr(straddling), kLoc), 0);
  EXPECT_EQ(error(), "");
}

TEST(UserMemoryScript, FaultInABeginProbeIsARuntimeError) {
  SondeRun r = runSonde("probe begin { println(user_string(0)) }");
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("ERROR: user string copy fault -14 at 0x0 [man error::fault] near "
                       "identifier 'user_string' at "),
            std::string::npos)
      << r.err;

  SondeRun caught = runSonde("probe begin { try { println(user_string(0)) } catch (e) { "
                             "println(\"caught: \", e) } println(user_string(0, \"<nil>\"), "
                             "\" \", user_long(0), \" \", user_string_quoted(0)) exit() }");
  EXPECT_EQ(caught.status, 0) << caught.err;
  EXPECT_EQ(caught.out, "caught: user string copy fault -14 at 0x0 [man error::fault]\n"
                        "<nil> 0 0x0\n");
}

} // namespace
} // namespace sonde::test
