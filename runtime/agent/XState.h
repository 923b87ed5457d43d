// Which vector registers the marker entry (MarkerEntry.S) saves around a handler.
#pragma once

#include <cstdint>

extern "C" {
// 0: xmm0-15 (no AVX enabled). 1: ymm0-15 (AVX). 2: zmm0-15 (AVX-512 enabled).
extern uint8_t sonde_agent_xstate_mode;
}

namespace sonde::agent {

// Sets sonde_agent_xstate_mode from CPUID and XCR0. Idempotent.
void detectXState();

} // namespace sonde::agent
