#include "driver/CompilerStack.h"

#include <cstring>
#include <exception>
#include <pthread.h>

namespace sonde {

namespace {

struct Job {
  const std::function<void()> *work;
  std::exception_ptr failure;
};

void *runJob(void *arg) {
  auto *job = static_cast<Job *>(arg);
  try {
    (*job->work)();
  } catch (...) {
    job->failure = std::current_exception();
  }
  return nullptr;
}

} // namespace

bool runOnCompilerStack(const std::function<void()> &work, std::string *error) {
  pthread_attr_t attr;
  if (int rc = pthread_attr_init(&attr); rc != 0) {
    *error = std::string("cannot set up the compiler thread: ") + std::strerror(rc);
    return false;
  }
  Job job{&work, nullptr};
  pthread_t thread;
  int rc = pthread_attr_setstacksize(&attr, kCompilerStackBytes);
  if (rc == 0)
    rc = pthread_create(&thread, &attr, runJob, &job);
  pthread_attr_destroy(&attr);
  if (rc != 0) {
    *error = "cannot start the compiler thread with a " +
             std::to_string(kCompilerStackBytes >> 20) + " MiB stack: " + std::strerror(rc);
    return false;
  }
  pthread_join(thread, nullptr);
  if (job.failure)
    std::rethrow_exception(job.failure);
  return true;
}

} // namespace sonde
