/* The letter of C's short escape for a control character or a backslash
 * (\a \b \f \n \r \t \v \\), or 0 for any other byte. Plain C, so that the BPF
 * runtime quotes strings with the same table as sonde. */
#pragma once

static inline char sonde_short_escape(int c) {
  switch (c) {
  case '\a': return 'a';
  case '\b': return 'b';
  case '\f': return 'f';
  case '\n': return 'n';
  case '\r': return 'r';
  case '\t': return 't';
  case '\v': return 'v';
  case '\\': return '\\';
  default: return 0;
  }
}
