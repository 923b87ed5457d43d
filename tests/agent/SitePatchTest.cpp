// The agent's patching layer in this process: marker NOPs patched to stubs (or
// int3 for sys/sdt.h) while threads run them, frames that carry the marker's
// registers and red zone, and text restored byte for byte.
#include "MarkerFrameReader.h"
#include "agent_markers.h"
#include "probes/marker/SdtNoteReader.h"
#include "runtime/agent/SitePatches.h"

#include <atomic>
#include <cstring>
#include <gtest/gtest.h>
#include <link.h>
#include <map>
#include <thread>
#include <vector>

namespace sonde::agent::test {
namespace {

using probes::marker::MarkerSite;

// The executable's load bias and its executable segment's bytes.
struct Executable {
  uintptr_t bias = 0;
  uintptr_t textStart = 0;
  size_t textSize = 0;
};

Executable executable() {
  Executable e;
  dl_iterate_phdr(
      [](dl_phdr_info *info, size_t, void *data) {
        auto &exe = *static_cast<Executable *>(data);
        exe.bias = info->dlpi_addr;
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const auto &ph = info->dlpi_phdr[i];
          if (ph.p_type == PT_LOAD && (ph.p_flags & PF_X)) {
            exe.textStart = info->dlpi_addr + ph.p_vaddr;
            exe.textSize = ph.p_memsz;
          }
        }
        return 1; // the executable is first
      },
      &e);
  return e;
}

std::vector<uint8_t> textBytes(const Executable &e) {
  const auto *p = reinterpret_cast<const uint8_t *>(e.textStart);
  return {p, p + e.textSize};
}

// Counts the events of one marker and checks each frame against the marker's
// own argument relations (see agent_markers.c).
struct CheckingHook {
  MarkerHook hook{&CheckingHook::fire};
  const MarkerSite *site = nullptr;
  bool clobberVectors = false;
  std::atomic<uint64_t> events{0};
  std::atomic<uint64_t> mismatches{0};
  std::atomic<uint64_t> trapped{0};

  static void fire(MarkerHook *h, sonde_marker_frame *frame, bool fromTrap) {
    auto *self = reinterpret_cast<CheckingHook *>(h);
    self->events.fetch_add(1, std::memory_order_relaxed);
    if (fromTrap)
      self->trapped.fetch_add(1, std::memory_order_relaxed);
    if (!self->argumentsMatch(*frame))
      self->mismatches.fetch_add(1, std::memory_order_relaxed);
    if (self->clobberVectors)
      clobber();
  }

  bool argumentsMatch(const sonde_marker_frame &f) const {
    const auto &args = site->args;
    if (args.empty())
      return false;
    int64_t a = argumentValue(f, args[0]);
    const std::string &name = site->name;
    for (size_t i = 1; i < args.size(); ++i) {
      int64_t v = argumentValue(f, args[i]);
      int64_t want = name == "regs"      ? a + static_cast<int64_t>(i)
                     : name == "many"    ? a + 7 * static_cast<int64_t>(i)
                     : name == "redzone" ? a / 3
                     : name == "hit"     ? 2 * a + 1
                                         : v;
      if (v != want)
        return false;
    }
    return true;
  }

  // What a handler calling libc may do to vector state.
  static void clobber() {
    __asm__ volatile("pxor %%xmm0, %%xmm0\n pxor %%xmm1, %%xmm1\n pxor %%xmm2, %%xmm2\n"
                     "pxor %%xmm3, %%xmm3\n pxor %%xmm4, %%xmm4\n pxor %%xmm5, %%xmm5\n"
                     "pxor %%xmm6, %%xmm6\n pxor %%xmm7, %%xmm7\n pxor %%xmm8, %%xmm8\n"
                     "pxor %%xmm9, %%xmm9\n pxor %%xmm10, %%xmm10\n pxor %%xmm11, %%xmm11\n"
                     "pxor %%xmm12, %%xmm12\n pxor %%xmm13, %%xmm13\n pxor %%xmm14, %%xmm14\n"
                     "pxor %%xmm15, %%xmm15\n" ::
                         : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8",
                           "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15");
    if (__builtin_cpu_supports("avx"))
      __asm__ volatile("vzeroall" ::
                           : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8",
                             "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15");
  }
};

class SitePatchTest : public ::testing::Test {
protected:
  void SetUp() override {
    std::string error;
    ASSERT_TRUE(initPatching(&error)) << error;
    auto sites = probes::marker::SdtNoteReader::read("/proc/self/exe", error);
    ASSERT_TRUE(sites) << error;
    exe_ = executable();
    for (const MarkerSite &s : *sites) {
      if (s.provider == "agent_test" || s.provider == "agent_stock")
        sites_[s.name] = s;
    }
    ASSERT_EQ(sites_.size(), 8u);
  }

  uintptr_t address(const std::string &name) { return exe_.bias + sites_.at(name).pc; }
  uint32_t nopSize(const std::string &name) {
    return sites_.at(name).nop == probes::marker::SiteNop::FiveByte ? 5 : 1;
  }

  PatchedSite *attach(const std::string &name, CheckingHook &hook,
                      VectorSave save = VectorSave::Full, bool leanFrame = false) {
    hook.site = &sites_.at(name);
    std::string error;
    PatchedSite *p = attachSite(address(name), nopSize(name), save, leanFrame, &hook.hook, &error);
    EXPECT_NE(p, nullptr) << name << ": " << error;
    return p;
  }

  Executable exe_;
  std::map<std::string, MarkerSite> sites_;
};

TEST_F(SitePatchTest, FramesCarryRegistersAndRedZone) {
  std::vector<uint8_t> before = textBytes(exe_);
  CheckingHook regs, redzone, many;
  PatchedSite *p[] = {attach("regs", regs), attach("redzone", redzone), attach("many", many)};
  EXPECT_NE(std::memcmp(reinterpret_cast<void *>(address("regs")), "\x0f\x1f\x44\x00\x00", 5), 0);
  long expected = 0, got = 0;
  for (long i = -500; i < 500; ++i) {
    long v[12];
    for (int k = 0; k < 12; ++k)
      v[k] = i * 1000 + 7 * k;
    expected += 3 * i;
    got += agent_fire_registers(i) + agent_fire_redzone(i) + agent_fire_many(v) - i * 1000 - i;
  }
  for (PatchedSite *s : p)
    detachSite(s);
  EXPECT_EQ(got, expected); // the red-zone slot the function returns survived
  EXPECT_EQ(regs.events.load(), 1000u);
  EXPECT_EQ(redzone.events.load(), 1000u);
  EXPECT_EQ(many.events.load(), 1000u);
  EXPECT_EQ(regs.mismatches.load() + redzone.mismatches.load() + many.mismatches.load(), 0u);
  EXPECT_EQ(regs.trapped.load(), 0u);
  EXPECT_TRUE(textBytes(exe_) == before);
  agent_fire_registers(1); // unpatched: no event
  EXPECT_EQ(regs.events.load(), 1000u);
}

// Lean frames (rbp and r12-r15 left unwritten) for sites whose arguments are
// in other registers or in memory: the values and the red zone are right.
TEST_F(SitePatchTest, LeanFramesCarryTheOtherRegistersAndRedZone) {
  CheckingHook redzone, many;
  PatchedSite *p[] = {attach("redzone", redzone, VectorSave::Sse, true),
                      attach("many", many, VectorSave::Args, true)};
  ASSERT_TRUE(p[0] && p[1]);
  EXPECT_TRUE(p[0]->leanFrame && p[1]->leanFrame);
  long expected = 0, got = 0;
  for (long i = -500; i < 500; ++i) {
    long v[12];
    for (int k = 0; k < 12; ++k)
      v[k] = i * 1000 + 7 * k;
    expected += 3 * i; // the red-zone slot (3i) survived; many returns v[0]
    got += agent_fire_redzone(i) + agent_fire_many(v) - i * 1000;
  }
  for (PatchedSite *s : p)
    detachSite(s);
  EXPECT_EQ(got, expected);
  EXPECT_EQ(redzone.events.load(), 1000u);
  EXPECT_EQ(many.events.load(), 1000u);
  EXPECT_EQ(redzone.mismatches.load() + many.mismatches.load(), 0u);
  // Full saves always get full frames.
  CheckingHook full;
  PatchedSite *f = attach("redzone", full, VectorSave::Full, true);
  ASSERT_NE(f, nullptr);
  EXPECT_FALSE(f->leanFrame);
  detachSite(f);
}

TEST_F(SitePatchTest, VectorStateSurvivesTheHandler) {
  double plain = agent_fire_vector(3.0), wide = agent_fire_avx(5.0);
  CheckingHook vec, avx;
  vec.clobberVectors = avx.clobberVectors = true;
  PatchedSite *a = attach("vector", vec);
  PatchedSite *b = attach("avx", avx);
  double plainHooked = agent_fire_vector(3.0), wideHooked = agent_fire_avx(5.0);
  detachSite(a);
  detachSite(b);
  EXPECT_EQ(vec.events.load(), 1u);
  EXPECT_EQ(avx.events.load(), 1u);
  EXPECT_EQ(plainHooked, plain);
  EXPECT_EQ(wideHooked, wide);

  CheckingHook xmm, ymm;
  xmm.clobberVectors = ymm.clobberVectors = true;
  PatchedSite *c = attach("xmm", xmm);
  PatchedSite *d = attach("ymm", ymm);
  EXPECT_EQ(agent_fire_all_xmm(7), 0);
  if (__builtin_cpu_supports("avx"))
    EXPECT_EQ(agent_fire_all_ymm(9), 0);
  detachSite(c);
  detachSite(d);
  EXPECT_EQ(xmm.events.load(), 1u);

  // The lean entry (sites where sonde found nothing wider live) keeps xmm0-15.
  CheckingHook lean;
  lean.clobberVectors = true;
  PatchedSite *e = attach("xmm", lean, VectorSave::Sse);
  ASSERT_NE(e, nullptr);
  EXPECT_NE(e->stub, c->stub); // its own stub, calling the other entry
  EXPECT_EQ(agent_fire_all_xmm(11), 0);
  detachSite(e);
  EXPECT_EQ(lean.events.load(), 1u);

  // The leanest (code without vector registers) keeps the argument registers
  // xmm0-7, and only them: the handler's clobbering shows in xmm8-15.
  CheckingHook args;
  args.clobberVectors = true;
  PatchedSite *f = attach("xmm", args, VectorSave::Args);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(agent_fire_all_xmm(13), 0xff00);
  detachSite(f);
  EXPECT_EQ(args.events.load(), 1u);
}

TEST_F(SitePatchTest, StockMarkerGoesThroughTheTrap) {
  std::vector<uint8_t> before = textBytes(exe_);
  ASSERT_EQ(nopSize("hit"), 1u);
  CheckingHook hit;
  PatchedSite *p = attach("hit", hit);
  long sum = 0;
  for (long i = 0; i < 300; ++i)
    sum += agent_fire_stock(i);
  detachSite(p);
  EXPECT_EQ(sum, 3 * (299 * 300 / 2) + 300);
  EXPECT_EQ(hit.events.load(), 300u);
  EXPECT_EQ(hit.trapped.load(), 300u);
  EXPECT_EQ(hit.mismatches.load(), 0u);
  EXPECT_TRUE(textBytes(exe_) == before);
}

TEST_F(SitePatchTest, RejectsBytesThatAreNotTheNop) {
  CheckingHook hook;
  hook.site = &sites_.at("regs");
  std::string error;
  // One byte into the 5-byte NOP is not a NOP start.
  EXPECT_EQ(attachSite(address("regs") + 1, 5, VectorSave::Full, false, &hook.hook, &error),
            nullptr);
  EXPECT_NE(error.find("NOP"), std::string::npos) << error;
  EXPECT_EQ(attachSite(address("regs"), 1, VectorSave::Full, false, &hook.hook, &error), nullptr);
}

// Threads run every marker while the main thread patches and unpatches them:
// nothing crashes, every event decodes, and events counted in a steady attached
// window add up exactly.
TEST_F(SitePatchTest, PatchingWhileThreadsRunTheSites) {
  std::vector<uint8_t> before = textBytes(exe_);
  const char *names[] = {"regs", "redzone", "many", "vector", "hit"};
  CheckingHook hooks[5];
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> calls{0};
  auto work = [&] {
    for (long i = 0; !stop.load(std::memory_order_relaxed); ++i) {
      agent_run_all(i);
      agent_fire_stock(i);
      calls.fetch_add(1, std::memory_order_relaxed);
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back(work);
  for (int round = 0; round < 200; ++round) {
    PatchedSite *p[5];
    for (int k = 0; k < 5; ++k)
      p[k] = attach(names[k], hooks[k]);
    std::this_thread::yield();
    for (PatchedSite *s : p)
      detachSite(s);
  }
  stop.store(true);
  for (auto &t : threads)
    t.join();
  for (auto &h : hooks)
    EXPECT_EQ(h.mismatches.load(), 0u);
  EXPECT_GT(calls.load(), 0u);
  EXPECT_TRUE(textBytes(exe_) == before);

  // A steady window: attached before the threads start, detached after they end.
  CheckingHook steady[5];
  PatchedSite *p[5];
  for (int k = 0; k < 5; ++k)
    p[k] = attach(names[k], steady[k]);
  threads.clear();
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([] {
      for (long i = 0; i < 5000; ++i) {
        agent_run_all(i);
        agent_fire_stock(i);
      }
    });
  for (auto &t : threads)
    t.join();
  for (PatchedSite *s : p)
    detachSite(s);
  for (auto &h : steady) {
    EXPECT_EQ(h.events.load(), 20000u) << h.site->name;
    EXPECT_EQ(h.mismatches.load(), 0u) << h.site->name;
  }
  EXPECT_TRUE(textBytes(exe_) == before);
}

} // namespace
} // namespace sonde::agent::test
