// Several processes and threads on one segment: locks, dead holders, session state.
#include "ValuesTestSupport.h"

#include "runtime/values/SegmentFormat.h"

#include <chrono>
#include <csignal>
#include <cstring>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace sonde::values::test {
namespace {

// Runs `body` in a child process; returns its wait status.
template <class F> int inChild(F body) {
  pid_t pid = fork();
  if (pid == 0) {
    body();
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return status;
}

TEST(ValuesSharing, ForkedProcessWritesThroughItsOwnMapping) {
  TestState st =
      makeState({scalar("n", ValueKind::Long), array("a", {KeyKind::String}, ValueKind::Long),
                 scalar("s", ValueKind::Stats)});
  uint64_t nData = st.layout.placements()[0].dataOffset;
  uint64_t aOff = st.offset("a"), sOff = st.offset("s");
  int fd = st.segment.fd();
  uint64_t fingerprint = st.layout.fingerprint();
  int status = inChild([&] {
    auto mine = Segment::attach(fd, fingerprint, nullptr);
    if (!mine)
      _exit(2);
    char *base = static_cast<char *>(mine->base());
    *reinterpret_cast<int64_t *>(base + nData) = 77;
    sonde_key k[] = {S("from-child")};
    sonde_map_set_long(reinterpret_cast<sonde_map *>(base + aOff), k, 5);
    for (int i = 1; i <= 10; ++i)
      sonde_stats_add(reinterpret_cast<sonde_stats *>(base + sOff), i);
  });
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_EQ(*reinterpret_cast<int64_t *>(static_cast<char *>(st.base()) + nData), 77);
  sonde_key k[] = {S("from-child")};
  EXPECT_EQ(sonde_map_get_long(st.map("a"), k), 5);
  int64_t sum = 0;
  EXPECT_EQ(sonde_stats_extract(st.stats("s"), SONDE_STAT_SUM, &sum), SONDE_OK);
  EXPECT_EQ(sum, 55);
}

TEST(ValuesSharing, LockedCountersAreExactAcrossProcessesAndThreads) {
  TestState st = makeState({array("a", {KeyKind::Long}, ValueKind::Long)});
  uint64_t off = st.offset("a");
  constexpr int kIncrements = 20000;
  auto hammer = [off](sonde_segment *seg) {
    auto *m = reinterpret_cast<sonde_map *>(reinterpret_cast<char *>(seg) + off);
    sonde_key k[] = {L(1)};
    for (int i = 0; i < kIncrements;) {
      if (sonde_locks_take(seg, &off, 1) != SONDE_OK)
        continue; // skipped: try again, this test wants every increment
      int64_t *v = nullptr;
      if (sonde_map_ref_long(m, k, &v) == SONDE_OK)
        ++*v;
      sonde_locks_release(seg, &off, 1);
      ++i;
    }
  };
  std::vector<pid_t> children;
  for (int c = 0; c < 2; ++c) {
    pid_t pid = fork();
    if (pid == 0) {
      auto mine = Segment::attach(st.segment.fd(), 0, nullptr);
      if (!mine)
        _exit(2);
      hammer(mine->abi());
      _exit(0);
    }
    children.push_back(pid);
  }
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t)
    threads.emplace_back([&] { hammer(st.seg()); });
  for (auto &t : threads)
    t.join();
  for (pid_t pid : children) {
    int status = 0;
    waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  sonde_key k[] = {L(1)};
  EXPECT_EQ(sonde_map_get_long(st.map("a"), k), 4 * kIncrements);
}

// A holder that keeps the lock past the spin budget (a descheduled thread, here
// one that sleeps) does not make the waiter skip: it sleeps on the lock instead.
TEST(ValuesSharing, AHolderDescheduledPastTheSpinBudgetIsWaitedFor) {
  TestState st = makeState({scalar("x", ValueKind::Long)});
  uint64_t x[] = {st.offset("x")};
  ASSERT_EQ(sonde_locks_take(st.seg(), x, 1), SONDE_OK);
  int taken = -1;
  std::thread other([&] {
    taken = sonde_locks_take(st.seg(), x, 1);
    if (taken == SONDE_OK)
      sonde_locks_release(st.seg(), x, 1);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50)); // 50 x the spin budget
  sonde_locks_release(st.seg(), x, 1);
  other.join();
  EXPECT_EQ(taken, SONDE_OK);
}

TEST(ValuesSharing, ContentionSkipsWithinTheBudgetAndReleasesPartialSets) {
  TestState st = makeState({scalar("x", ValueKind::Long), scalar("y", ValueKind::Long)});
  uint64_t both[] = {st.offset("x"), st.offset("y")};
  ASSERT_EQ(sonde_locks_take(st.seg(), &both[1], 1), SONDE_OK); // hold y
  int skipped = -1, xAfterwards = -1;
  double seconds = 0;
  std::thread other([&] {
    auto start = std::chrono::steady_clock::now();
    skipped = sonde_locks_take(st.seg(), both, 2);
    seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    xAfterwards = sonde_locks_take(st.seg(), both, 1);
    if (xAfterwards == SONDE_OK)
      sonde_locks_release(st.seg(), both, 1);
  });
  other.join();
  EXPECT_EQ(skipped, SONDE_ERR_SKIPPED);
  EXPECT_GE(seconds, 100 * 10e-6); // MAXTRYLOCK x TRYLOCKDELAY
  EXPECT_LT(seconds, 10.0);
  EXPECT_EQ(xAfterwards, SONDE_OK) << "x must have been released after the skip";
  sonde_locks_release(st.seg(), &both[1], 1);
  EXPECT_EQ(sonde_locks_take(st.seg(), both, 2), SONDE_OK);
  sonde_locks_release(st.seg(), both, 2);
}

TEST(ValuesSharing, ATargetKilledHoldingALockCannotWedgeSonde) {
  TestState st = makeState({array("a", {KeyKind::Long}, ValueKind::Long)});
  uint64_t off = st.offset("a");
  sonde_segment *seg = st.seg();
  int status = inChild([&] {
    if (sonde_locks_take(seg, &off, 1) != SONDE_OK)
      _exit(3);
    kill(getpid(), SIGKILL);
  });
  ASSERT_TRUE(WIFSIGNALED(status));
  auto start = std::chrono::steady_clock::now();
  ASSERT_EQ(sonde_locks_take(seg, &off, 1), SONDE_OK);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 0.5);
  sonde_locks_release(seg, &off, 1);
  ASSERT_EQ(sonde_locks_take(seg, &off, 1), SONDE_OK) << "the mutex must be consistent again";
  sonde_locks_release(seg, &off, 1);
}

TEST(ValuesSharing, AMapLeftHalfUpdatedByADeadHolderIsRepaired) {
  TestState st = makeState({array("a", {KeyKind::Long}, ValueKind::Long, 64)});
  uint64_t off = st.offset("a");
  sonde_segment *seg = st.seg();
  sonde_map *a = st.map("a");
  int status = inChild([&] {
    if (sonde_locks_take(seg, &off, 1) != SONDE_OK)
      _exit(3);
    for (int64_t i = 0; i < 40; ++i) {
      sonde_key k[] = {L(i)};
      sonde_map_set_long(a, k, i * i);
    }
    // Die in the middle of deleting key 7 (the 8th entry handed out): already
    // unmarked, nothing else done yet, while index and count are scrambled.
    auto *h = globalData<MapHeader>(reinterpret_cast<GlobalHeader *>(a));
    auto *eighth = reinterpret_cast<EntryHeader *>(reinterpret_cast<char *>(h) + h->entriesOffset +
                                                   7ull * h->entryStride);
    eighth->live = 0;
    std::memset(reinterpret_cast<char *>(h) + h->indexOffset, 0, 64);
    h->count += 5;
    kill(getpid(), SIGKILL);
  });
  ASSERT_TRUE(WIFSIGNALED(status));
  ASSERT_EQ(sonde_locks_take(seg, &off, 1), SONDE_OK);
  EXPECT_EQ(sonde_map_count(a), 39u);
  for (int64_t i = 0; i < 40; ++i) {
    sonde_key k[] = {L(i)};
    EXPECT_EQ(sonde_map_exists(a, k), i == 7 ? 0 : 1) << i;
    if (i != 7)
      EXPECT_EQ(sonde_map_get_long(a, k), i * i);
  }
  // The order list survives too: insertion order, without key 7.
  sonde_foreach_spec spec{SONDE_SORT_NONE, 0, 0, 0, SONDE_NO_LIMIT, nullptr};
  sonde_iter it;
  ASSERT_EQ(sonde_foreach_begin(a, &spec, &it), SONDE_OK);
  int64_t expected = 0;
  while (sonde_foreach_next(&it)) {
    if (expected == 7)
      ++expected;
    EXPECT_EQ(sonde_iter_key_long(&it, 1), expected++);
  }
  sonde_foreach_end(&it);
  EXPECT_EQ(expected, 40);
  sonde_key fresh[] = {L(1000)};
  EXPECT_EQ(sonde_map_set_long(a, fresh, 1), SONDE_OK);
  EXPECT_EQ(sonde_map_count(a), 40u);
  sonde_locks_release(seg, &off, 1);
}

TEST(ValuesSharing, SessionCountsErrorsSkipsAndExit) {
  sonde_limits limits = defaultLimits();
  limits.max_errors = 1;
  limits.max_skipped = 2;
  TestState st = makeState({scalar("n", ValueKind::Long)}, limits);
  sonde_segment *seg = st.seg();
  EXPECT_EQ(sonde_session_running(seg), 0);
  sonde_session_set_state(seg, SONDE_SESSION_RUNNING);
  EXPECT_EQ(sonde_session_running(seg), 1);
  EXPECT_EQ(sonde_session_note_error(seg), 0);
  EXPECT_EQ(sonde_session_state(seg), SONDE_SESSION_RUNNING);
  EXPECT_EQ(sonde_session_note_skipped(seg), 0);
  EXPECT_EQ(sonde_session_note_skipped(seg), 0);
  EXPECT_EQ(sonde_session_note_skipped(seg), 1); // the one past MAXSKIPPED, reported once
  EXPECT_EQ(sonde_session_note_skipped(seg), 0);
  EXPECT_EQ(sonde_session_state(seg), SONDE_SESSION_ERROR);
  EXPECT_EQ(sonde_session_exit_requested(seg), 1);
  EXPECT_EQ(sonde_session_note_error(seg), 1);
  EXPECT_EQ(sonde_session_error_count(seg), 2u);
  EXPECT_EQ(sonde_session_skipped_count(seg), 4u);

  TestState fresh = makeState({scalar("n", ValueKind::Long)});
  sonde_session_set_state(fresh.seg(), SONDE_SESSION_RUNNING);
  EXPECT_EQ(sonde_session_exit_requested(fresh.seg()), 0);
  sonde_session_request_exit(fresh.seg());
  EXPECT_EQ(sonde_session_state(fresh.seg()), SONDE_SESSION_STOPPING);
  EXPECT_EQ(sonde_session_exit_requested(fresh.seg()), 1);
  EXPECT_EQ(sonde_session_running(fresh.seg()), 0);
}

} // namespace
} // namespace sonde::values::test
