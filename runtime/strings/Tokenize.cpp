// tokenize(input, delim) (tapset/tokenize.stp): strsep over a private copy of
// the input, skipping empty tokens, with the position kept between calls.
#include "runtime/strings/StringAbi.h"

#include <cstring>

extern "C" size_t sonde_str_tokenize(SondeTokenizer *state, const char *input, const char *delim,
                                     char *out, size_t cap) {
  if (cap == 0)
    return 0;
  out[0] = '\0';
  if (input[0] != '\0' && state->capacity > 0) {
    const size_t n = strnlen(input, state->capacity - 1);
    std::memcpy(state->text, input, n);
    state->text[n] = '\0';
    state->next = 0;
    state->active = 1;
  }
  while (state->active) {
    char *token = state->text + state->next;
    const size_t length = std::strcspn(token, delim);
    if (token[length] != '\0') { // a delimiter: cut there, continue after it
      token[length] = '\0';
      state->next += static_cast<uint32_t>(length + 1);
    } else {
      state->active = 0;
    }
    if (length == 0)
      continue;
    const size_t n = length < cap - 1 ? length : cap - 1;
    std::memcpy(out, token, n);
    out[n] = '\0';
    return n;
  }
  return 0;
}
