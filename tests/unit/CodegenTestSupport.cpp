#include "CodegenTestSupport.h"

#include "SemaTestSupport.h"
#include "diag/Diagnostics.h"

#include <cstring>
#include <dlfcn.h>
#include <fcntl.h>
#include <fstream>
#include <spawn.h>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

namespace sonde::test {

namespace {

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

} // namespace

GeneratedIr generateIr(const std::string &script, const codegen::CodegenOptions &opts) {
  GeneratedIr r;
  Elaborated e = elaborateText(script);
  if (!e.ok) {
    r.diagnostics = e.diagnostics;
    return r;
  }
  std::ostringstream out;
  DiagnosticEngine diags(out);
  auto module = codegen::generateModule(e.script, opts, diags);
  diags.flush();
  r.diagnostics = out.str();
  if (module) {
    r.ok = true;
    r.ir = module->irText();
  }
  return r;
}

std::unique_ptr<CompiledModule> CompiledModule::compile(const std::string &script,
                                                        const codegen::CodegenOptions &opts) {
  std::unique_ptr<CompiledModule> m(new CompiledModule);
  Elaborated e = elaborateText(script);
  if (!e.ok) {
    m->diagnostics_ = e.diagnostics;
    return m;
  }
  std::string error;
  m->dir_ = codegen::BuildDirectory::create(&error);
  if (!m->dir_) {
    m->diagnostics_ = error;
    return m;
  }
  codegen::CodegenOptions o = opts;
  o.buildDir = m->dir_->path();
  std::ostringstream out;
  DiagnosticEngine diags(out);
  std::optional<std::string> path = codegen::compileModule(e.script, o, diags);
  diags.flush();
  m->diagnostics_ = out.str();
  if (!path)
    return m;
  m->path_ = *path;
  m->handle_ = dlopen(path->c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!m->handle_) {
    m->diagnostics_ += dlerror();
    return m;
  }
  auto *desc = static_cast<const sonde_module_desc *>(dlsym(m->handle_, SONDE_MODULE_SYMBOL));
  if (!desc) {
    m->diagnostics_ += "no " SONDE_MODULE_SYMBOL " in the module";
    return m;
  }
  m->layout_ = values::GlobalLayout::deserialize(desc->layout, desc->layout_size, &error);
  if (!m->layout_) {
    m->diagnostics_ += error;
    return m;
  }
  m->desc_ = desc;
  return m;
}

CompiledModule::~CompiledModule() {
  if (handle_)
    dlclose(handle_);
}

int CompiledModule::probe(const std::string &pp) const {
  for (uint32_t i = 0; i < desc_->probe_count; ++i)
    if (pp == desc_->probes[i].pp)
      return static_cast<int>(i);
  return -1;
}

// ------------------------------------------------------------------ HandlerHarness

HandlerHarness::HandlerHarness(const CompiledModule &m) : module_(m) {
  std::string error;
  segment_ = values::Segment::create(m.layout(), &error);
}

int32_t HandlerHarness::run(int index) {
  const values::GlobalLayout &layout = module_.layout();
  std::vector<char> message(layout.limits().max_string_len);
  sonde_context ctx{};
  ctx.segment = segment_->abi();
  ctx.actions_left = layout.limits().max_action_interruptible;
  ctx.probe_index = static_cast<uint32_t>(index);
  ctx.error_message = message.data();
  ctx.record_cursor = recordCursor_;
  module_.desc().probes[index].handler(&ctx);
  return ctx.error;
}

void HandlerHarness::initialize() {
  sonde_context ctx{};
  ctx.segment = segment_->abi();
  if (module_.desc().init_globals)
    module_.desc().init_globals(&ctx);
}

uint64_t HandlerHarness::offsetOf(const std::string &name) const {
  int i = module_.layout().find(name);
  return i < 0 ? 0 : module_.layout().placements()[i].offset;
}

const char *HandlerHarness::data(const std::string &name) const {
  int i = module_.layout().find(name);
  if (i < 0)
    return nullptr;
  return static_cast<const char *>(segment_->base()) + module_.layout().placements()[i].dataOffset;
}

int64_t HandlerHarness::longGlobal(const std::string &name) const {
  int64_t v = 0;
  if (const char *p = data(name))
    std::memcpy(&v, p, sizeof v);
  return v;
}

std::string HandlerHarness::stringGlobal(const std::string &name) const {
  const char *p = data(name);
  return p ? std::string(p) : std::string();
}

int64_t HandlerHarness::mapLong(const std::string &name, const std::vector<sonde_key> &keys) const {
  auto *m = reinterpret_cast<const sonde_map *>(static_cast<const char *>(segment_->base()) +
                                                offsetOf(name));
  return sonde_map_get_long(m, keys.data());
}

uint32_t HandlerHarness::mapCount(const std::string &name) const {
  auto *m = reinterpret_cast<const sonde_map *>(static_cast<const char *>(segment_->base()) +
                                                offsetOf(name));
  return sonde_map_count(m);
}

int64_t HandlerHarness::stat(const std::string &name, int32_t extractor) const {
  auto *s = reinterpret_cast<const sonde_stats *>(static_cast<const char *>(segment_->base()) +
                                                  offsetOf(name));
  int64_t out = 0;
  sonde_stats_extract(s, extractor, &out);
  return out;
}

// ------------------------------------------------------------------ the binary

SondeRun runSonde(const std::string &script, const std::vector<std::string> &options) {
  SondeRun r;
  char dir[] = "/tmp/sonde-testXXXXXX";
  if (!mkdtemp(dir))
    return r;
  std::string base = dir;
  std::ofstream(base + "/script.probe") << script;
  std::vector<std::string> argv{SONDE_BINARY};
  argv.insert(argv.end(), options.begin(), options.end());
  argv.push_back(base + "/script.probe");
  std::vector<char *> args;
  for (auto &a : argv)
    args.push_back(a.data());
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, (base + "/out").c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, (base + "/err").c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid;
  if (posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ) == 0) {
    int status = 0;
    waitpid(pid, &status, 0);
    r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  posix_spawn_file_actions_destroy(&actions);
  r.out = readFile(base + "/out");
  r.err = readFile(base + "/err");
  for (const char *f : {"/script.probe", "/out", "/err"})
    unlink((base + f).c_str());
  rmdir(dir);
  return r;
}

} // namespace sonde::test
