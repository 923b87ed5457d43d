/* End-to-end target built with the stock <sys/sdt.h>: its markers are 1-byte
 * NOPs (the jump path where sonde can displace the code after them, else the
 * trap path). Usage: e2e_stock RECORD_FILE ITERATIONS. */
#include "e2e_record.h"

#include <stdint.h>
#include <sys/sdt.h>

__attribute__((noinline)) static void fire(long i) {
  int32_t small = (int32_t)(-i * 3);
  uint16_t port = (uint16_t)(65535 - i);
  int64_t big = (int64_t)i * -10000000000ll;
  STAP_PROBE3(e2e_stock, tick, small, port, big);
  e2e_record("e2e_stock", "tick", NULL, 3, (long long)small, (long long)port, (long long)big);
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s RECORD_FILE ITERATIONS\n", argv[0]);
    return 2;
  }
  e2e_open(argv[1]);
  long iterations = strtol(argv[2], NULL, 10);
  for (long i = 0; i < iterations; ++i)
    fire(i);
  return fclose(e2e_out) == 0 ? 0 : 1;
}
