/* Runs the shared-library markers: prints the total length of its arguments and how
 * many 'a' characters they hold. */
#include <stddef.h>
#include <stdio.h>

size_t marker_lib_length(const char *text);
size_t marker_lib_count(const char *text, char wanted);

int main(int argc, char **argv) {
  size_t total = 0;
  size_t as = 0;
  for (int i = 1; i < argc; ++i) {
    total += marker_lib_length(argv[i]);
    as += marker_lib_count(argv[i], 'a');
  }
  printf("total=%zu a=%zu\n", total, as);
  return 0;
}
