#include "probes/tracepoint/BpfObject.h"

#include "probes/tracepoint/TracepointCatalog.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <gelf.h>
#include <libelf.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>
#include <vector>

namespace sonde::probes::tracepoint {

namespace {

// libbpf reports through a process-wide print callback: while one of our calls
// runs, its warnings are collected here instead of going to stderr.
std::mutex libbpfLock;
std::string *libbpfMessages = nullptr;

int collectLibbpfMessage(enum libbpf_print_level level, const char *format, va_list args) {
  if (level == LIBBPF_DEBUG || !libbpfMessages)
    return 0;
  char line[1024];
  int n = std::vsnprintf(line, sizeof line, format, args);
  if (n > 0)
    libbpfMessages->append(line, std::min<size_t>(static_cast<size_t>(n), sizeof line - 1));
  return 0;
}

// Holds libbpfLock and routes libbpf's messages into `messages` for its lifetime.
class LibbpfMessages {
public:
  LibbpfMessages() : guard_(libbpfLock) {
    libbpfMessages = &text;
    previous_ = libbpf_set_print(collectLibbpfMessage);
  }
  ~LibbpfMessages() {
    libbpf_set_print(previous_);
    libbpfMessages = nullptr;
  }
  std::string text;

private:
  std::lock_guard<std::mutex> guard_;
  libbpf_print_fn_t previous_;
};

// The last `count` non-empty lines of `text`.
std::string lastLines(const std::string &text, size_t count) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (!line.empty())
      lines.push_back(line);
  size_t from = lines.size() > count ? lines.size() - count : 0;
  std::string out;
  for (size_t i = from; i < lines.size(); ++i)
    out += "\n  " + lines[i];
  return out;
}

// The last source line the verifier's log names ("; n++ @ app.probe:4", from
// the program's BTF line info), as "\n  at app.probe:4: n++", or "".
std::string lastSourceLine(const std::string &log) {
  std::istringstream in(log);
  std::string last;
  for (std::string line; std::getline(in, line);)
    if (line.rfind("; ", 0) == 0 && line.find(" @ ") != std::string::npos)
      last = line;
  if (last.empty())
    return "";
  size_t at = last.rfind(" @ ");
  std::string text = last.substr(2, at - 2);
  text.erase(0, text.find_first_not_of(" \t"));
  return "\n  at " + last.substr(at + 3) + ": " + text;
}

bool permissionDenied(int err) { return err == EPERM || err == EACCES; }

// Why an operation failed: missing privileges in one line, else the system's
// reason and libbpf's last lines.
std::string failure(int err, const std::string &messages, size_t lines) {
  if (permissionDenied(err))
    return ": kernel probes need root (CAP_BPF and CAP_PERFMON)";
  return std::string(": ") + std::strerror(err) + lastLines(messages, lines);
}

} // namespace

struct BpfObject::Impl {
  std::vector<uint8_t> image; // libbpf keeps pointers into it until load
  std::string name;
  bpf_object *object = nullptr;
  std::vector<bpf_link *> links;
  std::vector<std::unique_ptr<char[]>> logs; // one verifier log per program
  bool loaded = false;
  std::vector<std::pair<void *, size_t>> mappings; // mapGlobal()

  ~Impl() {
    for (auto [addr, size] : mappings)
      munmap(addr, size);
    for (bpf_link *l : links)
      bpf_link__destroy(l);
    if (object)
      bpf_object__close(object);
  }

  // The internal map holding global section `section` (".bss", ...).
  bpf_map *globalMap(const std::string &section) const {
    bpf_map *map = nullptr;
    bpf_object__for_each_map(map, object) {
      std::string mapName = bpf_map__name(map);
      if (bpf_map__is_internal(map) && mapName.size() >= section.size() &&
          mapName.compare(mapName.size() - section.size(), section.size(), section) == 0)
        return map;
    }
    return nullptr;
  }

  // Bytes [offset, offset + size) of global section `section`, or null (error set).
  char *globalBytes(const std::string &section, size_t offset, size_t size, std::string *error) {
    bpf_map *map = globalMap(section);
    size_t total = 0;
    const void *data = map ? bpf_map__initial_value(map, &total) : nullptr;
    if (!data) {
      *error = name + ": no global section " + section;
      return nullptr;
    }
    if (offset > total || size > total - offset) {
      *error = name + ": bytes " + std::to_string(offset) + "+" + std::to_string(size) +
               " are outside " + section + " (" + std::to_string(total) + " bytes)";
      return nullptr;
    }
    // Before load, libbpf's writable copy of the section's initial image.
    return const_cast<char *>(static_cast<const char *>(data)) + offset;
  }
};

BpfObject::BpfObject(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

BpfObject::~BpfObject() = default;

std::unique_ptr<BpfObject> BpfObject::open(std::span<const uint8_t> image, const std::string &name,
                                           std::string *error) {
  auto impl = std::make_unique<Impl>();
  impl->image.assign(image.begin(), image.end());
  impl->name = name;
  LibbpfMessages messages;
  bpf_object_open_opts opts{};
  opts.sz = sizeof opts;
  opts.object_name = impl->name.c_str();
  impl->object = bpf_object__open_mem(impl->image.data(), impl->image.size(), &opts);
  if (!impl->object) {
    int err = errno;
    *error = name + ": not a loadable BPF object" + failure(err, messages.text, 3);
    return nullptr;
  }
  return std::unique_ptr<BpfObject>(new BpfObject(std::move(impl)));
}

bool BpfObject::setGlobal(const std::string &section, size_t offset, const void *data, size_t size,
                          std::string *error) {
  if (impl_->loaded) {
    *error = impl_->name + ": " + section + " can only be set before loading";
    return false;
  }
  char *bytes = impl_->globalBytes(section, offset, size, error);
  if (!bytes)
    return false;
  std::memcpy(bytes, data, size);
  return true;
}

bool BpfObject::load(std::string *error) {
  constexpr size_t kLogSize = 1 << 20;
  // Writable globals are mapped by sonde while the programs run (mapGlobal);
  // libbpf makes them mappable only when BTF describes the section.
  bpf_map *map = nullptr;
  bpf_object__for_each_map(map, impl_->object) {
    if (bpf_map__is_internal(map) && !(bpf_map__map_flags(map) & BPF_F_RDONLY_PROG))
      bpf_map__set_map_flags(map, bpf_map__map_flags(map) | BPF_F_MMAPABLE);
  }
  bpf_program *program = nullptr;
  bpf_object__for_each_program(program, impl_->object) {
    impl_->logs.push_back(std::make_unique<char[]>(kLogSize));
    impl_->logs.back()[0] = '\0';
    bpf_program__set_log_buf(program, impl_->logs.back().get(), kLogSize);
  }
  LibbpfMessages messages;
  if (bpf_object__load(impl_->object) != 0) {
    int err = errno;
    // The program the verifier refused is the one with a log.
    bpf_object__for_each_program(program, impl_->object) {
      size_t size = 0;
      const char *log = bpf_program__log_buf(program, &size);
      if (log && *log) {
        *error = impl_->name + ": the kernel's verifier refused program '" +
                 bpf_program__name(program) + "':" + lastLines(log, 8) + lastSourceLine(log);
        return false;
      }
    }
    *error = impl_->name + ": cannot load" + failure(err, messages.text, 3);
    return false;
  }
  impl_->loaded = true;
  return true;
}

bool BpfObject::attach(const std::vector<TailCall> &tailCalls, std::string *error) {
  if (!impl_->loaded) {
    *error = impl_->name + ": not loaded";
    return false;
  }
  // libbpf resolves tracepoint ids through the kernel's tracefs.
  if (!TracepointCatalog::kernelEventsDir(error))
    return false;
  std::set<std::string> called;
  for (const TailCall &t : tailCalls) {
    bpf_program *program = bpf_object__find_program_by_name(impl_->object, t.program.c_str());
    bpf_map *map = bpf_object__find_map_by_name(impl_->object, t.map.c_str());
    int fd = program ? bpf_program__fd(program) : -1;
    if (fd < 0 || !map || bpf_map__type(map) != BPF_MAP_TYPE_PROG_ARRAY) {
      *error = impl_->name + ": no program '" + t.program + "' or prog-array map '" + t.map + "'";
      return false;
    }
    if (bpf_map_update_elem(bpf_map__fd(map), &t.key, &fd, BPF_ANY) != 0) {
      *error = impl_->name + ": cannot put program '" + t.program + "' into map '" + t.map +
               "': " + std::strerror(errno);
      return false;
    }
    called.insert(t.program);
  }
  LibbpfMessages messages;
  bpf_program *program = nullptr;
  bpf_object__for_each_program(program, impl_->object) {
    if (called.count(bpf_program__name(program)))
      continue;
    bpf_link *link = bpf_program__attach(program);
    if (!link) {
      int err = errno;
      *error = impl_->name + ": cannot attach program '" + bpf_program__name(program) + "' (" +
               bpf_program__section_name(program) + ")" + failure(err, messages.text, 2);
      detach();
      return false;
    }
    impl_->links.push_back(link);
  }
  return true;
}

bool BpfObject::readGlobal(const std::string &section, size_t offset, void *out, size_t size,
                           std::string *error) {
  if (!impl_->loaded) {
    *error = impl_->name + ": not loaded";
    return false;
  }
  if (!impl_->globalBytes(section, offset, size, error))
    return false;
  // The section is the one value of a one-entry array map.
  bpf_map *map = impl_->globalMap(section);
  std::vector<char> value(bpf_map__value_size(map));
  const uint32_t key = 0;
  if (bpf_map_lookup_elem(bpf_map__fd(map), &key, value.data()) != 0) {
    *error = impl_->name + ": reading " + section + ": " + std::strerror(errno);
    return false;
  }
  std::memcpy(out, value.data() + offset, size);
  return true;
}

void BpfObject::detach() {
  // Each detach waits for an RCU grace period; from several threads at once
  // they share grace periods (720 syscall tracepoints: seconds, not half a minute).
  std::vector<bpf_link *> &links = impl_->links;
  size_t threads = std::min<size_t>(32, (links.size() + 7) / 8);
  if (threads <= 1) {
    for (bpf_link *l : links)
      bpf_link__destroy(l);
  } else {
    std::vector<std::thread> pool;
    for (size_t t = 0; t < threads; ++t)
      pool.emplace_back([&links, t, threads] {
        for (size_t i = t; i < links.size(); i += threads)
          bpf_link__destroy(links[i]);
      });
    for (std::thread &th : pool)
      th.join();
  }
  links.clear();
}

size_t BpfObject::attachedCount() const { return impl_->links.size(); }

std::vector<uint8_t> BpfObject::symbolBytes(const std::string &name) const {
  std::vector<uint8_t> out;
  elf_version(EV_CURRENT);
  std::vector<uint8_t> copy = impl_->image; // libelf may write to the image it reads
  Elf *elf = elf_memory(reinterpret_cast<char *>(copy.data()), copy.size());
  if (!elf)
    return out;
  Elf_Scn *scn = nullptr;
  while (out.empty() && (scn = elf_nextscn(elf, scn)) != nullptr) {
    GElf_Shdr shdr;
    if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_SYMTAB)
      continue;
    Elf_Data *data = elf_getdata(scn, nullptr);
    size_t count = shdr.sh_entsize ? shdr.sh_size / shdr.sh_entsize : 0;
    for (size_t i = 0; data && i < count; ++i) {
      GElf_Sym sym;
      if (!gelf_getsym(data, static_cast<int>(i), &sym))
        continue;
      const char *symName = elf_strptr(elf, shdr.sh_link, sym.st_name);
      if (!symName || name != symName || sym.st_shndx == SHN_UNDEF || sym.st_shndx >= SHN_LORESERVE)
        continue;
      Elf_Data *bytes = elf_getdata(elf_getscn(elf, sym.st_shndx), nullptr);
      if (bytes && bytes->d_buf && sym.st_value + sym.st_size <= bytes->d_size) {
        auto *begin = static_cast<const uint8_t *>(bytes->d_buf) + sym.st_value;
        out.assign(begin, begin + sym.st_size);
      }
      break;
    }
  }
  elf_end(elf);
  return out;
}

bool BpfObject::resizeMap(const std::string &name, uint32_t keySize, uint32_t valueSize,
                          uint32_t maxEntries, uint32_t flags, std::string *error) {
  bpf_map *map = bpf_object__find_map_by_name(impl_->object, name.c_str());
  if (!map) {
    *error = impl_->name + ": no map '" + name + "'";
    return false;
  }
  bool ringBuffer = bpf_map__type(map) == BPF_MAP_TYPE_RINGBUF;
  if ((!ringBuffer &&
       (bpf_map__set_key_size(map, keySize) != 0 || bpf_map__set_value_size(map, valueSize) != 0 ||
        bpf_map__set_map_flags(map, flags) != 0)) ||
      bpf_map__set_max_entries(map, maxEntries) != 0) {
    *error = impl_->name + ": cannot size map '" + name + "': " + std::strerror(errno);
    return false;
  }
  return true;
}

int BpfObject::mapFd(const std::string &name) const {
  bpf_map *map = bpf_object__find_map_by_name(impl_->object, name.c_str());
  return map ? bpf_map__fd(map) : -1;
}

void *BpfObject::mapGlobal(const std::string &section, std::string *error) {
  bpf_map *map = impl_->loaded ? impl_->globalMap(section) : nullptr;
  if (!map) {
    *error = impl_->name + ": no loaded global section " + section;
    return nullptr;
  }
  size_t size = bpf_map__value_size(map);
  size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  size = (size + page - 1) / page * page;
  void *addr = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, bpf_map__fd(map), 0);
  if (addr == MAP_FAILED) {
    *error = impl_->name + ": cannot map " + section + ": " + std::strerror(errno);
    return nullptr;
  }
  impl_->mappings.emplace_back(addr, size);
  return addr;
}

} // namespace sonde::probes::tracepoint
