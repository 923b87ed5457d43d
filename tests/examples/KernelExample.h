// Running a kernel example: where the kernel refuses BPF (not root), the test
// skips with sonde's one-line reason instead of failing.
#pragma once

#include "ExampleRun.h"

#include <gtest/gtest.h>

#define SKIP_OR_ASSERT_OK(r)                                                                       \
  do {                                                                                             \
    if (::sonde::examples::kernelProbesRefused(r))                                                 \
      GTEST_SKIP() << (r).stderrText;                                                              \
    ASSERT_TRUE((r).exited && (r).exitCode == 0) << ::sonde::examples::describe(r);                \
  } while (0)
