// A C++ program whose exceptions pass libstdc++'s stock `throw` marker (a 1-byte
// sys/sdt.h site in __cxa_throw, arguments: the exception object and its
// std::type_info). `e2e_throw FILE N` serves N requests through the chain
// main -> serve_requests -> handle_request -> validate_request; validate_request
// throws e2e::BadRequest for two requests in three and std::runtime_error for
// the third, and serve_requests catches each. It writes one line per exception
// to FILE: "ADDRESS TYPE_NAME FIRST_WORD" (the object's address, typeid's name,
// the object's first 8 bytes as a signed number), then "thrown N" and "served S";
// nothing to stdout, which is the script's.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <typeinfo>

namespace e2e {
struct BadRequest {
  long code;
};
} // namespace e2e

namespace {

FILE *records;
long thrown;

template <typename Exception> void record(const Exception &e) {
  const void *object = &e;
  long firstWord;
  std::memcpy(&firstWord, object, sizeof firstWord);
  std::fprintf(records, "%p %s %ld\n", object, typeid(e).name(), firstWord);
}

} // namespace

// Not inlined and with work after each call, so that every caller's frame holds a
// return address inside its own function.
extern "C" __attribute__((noinline)) long validate_request(long request) {
  if (request % 3 == 1) {
    ++thrown;
    throw std::runtime_error("request refused");
  }
  if (request % 3 == 2) {
    ++thrown;
    throw e2e::BadRequest{request * 1000 + 7};
  }
  return request;
}

extern "C" __attribute__((noinline)) long handle_request(long request) {
  return validate_request(request) * 2 + 1;
}

extern "C" __attribute__((noinline)) long serve_requests(long count) {
  long served = 0;
  for (long request = 0; request < count; ++request) {
    try {
      served += handle_request(request);
    } catch (const e2e::BadRequest &e) {
      record(e);
    } catch (const std::runtime_error &e) {
      record(e);
    }
  }
  return served;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: e2e_throw FILE N\n");
    return 2;
  }
  records = std::fopen(argv[1], "w");
  if (!records)
    return 1;
  long served = serve_requests(std::atol(argv[2]));
  std::fprintf(records, "thrown %ld\nserved %ld\n", thrown, served);
  return std::fclose(records) == 0 ? 0 : 1;
}
