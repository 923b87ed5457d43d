// Which vector state the marker entry (MarkerEntry.S) saves around a handler.
#pragma once

#include <cstdint>

extern "C" {
// 0: SSE only (no AVX enabled): movdqa. 1: xsave only while XINUSE shows AVX or
// AVX-512 state in use. 2: always xsave (AVX enabled but XINUSE not reported).
extern uint8_t sonde_agent_xstate_mode;
// XSAVE area bytes for sonde_agent_xsave_mask, and that mask (x87, SSE, AVX,
// AVX-512 components the OS enabled).
extern uint64_t sonde_agent_xsave_size;
extern uint32_t sonde_agent_xsave_mask;
}

namespace sonde::agent {

// Sets the three variables above from CPUID and XCR0. Idempotent.
void detectXState();

} // namespace sonde::agent
