// What the kernel script tests share: running `sonde` on the known workloads,
// and skipping where the kernel refuses BPF.
#pragma once

#include "../corpus/ProcessRunner.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

namespace sonde::test {

inline ProcessResult runSonde(const std::vector<std::string> &args) {
  return runProcess(SONDE_BINARY, args, "/tmp", std::chrono::seconds(120));
}

// kernel_workload with `args` (tests/kernel/kernel_workload.c).
inline std::string workload(const std::string &args) {
  return std::string(KERNEL_WORKLOAD) + " " + args;
}

inline std::string describe(const ProcessResult &r) {
  return r.describe() + "\n--- stderr ---\n" + r.stderrText.substr(0, 4000);
}

} // namespace sonde::test

// Where the kernel refuses BPF, sonde says so in one line: skip with it.
#define SKIP_UNLESS_PERMITTED(r)                                                                   \
  if ((r).stderrText.find("kernel probes need root") != std::string::npos)                         \
  GTEST_SKIP() << (r).stderrText
