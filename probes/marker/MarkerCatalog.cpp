#include "probes/marker/MarkerCatalog.h"

#include "probes/marker/ElfDynamicInfo.h"
#include "probes/marker/ElfSymbols.h"
#include "probes/marker/LibraryResolver.h"

#include <cstdlib>
#include <filesystem>
#include <fnmatch.h>
#include <fstream>
#include <glob.h>
#include <map>
#include <mutex>
#include <set>
#include <sys/stat.h>
#include <type_traits>
#include <unistd.h>
#include <wordexp.h>

namespace sonde::probes::marker {
namespace {

namespace fs = std::filesystem;

// Identifies one version of a file: a rebuilt binary gets a new stamp.
struct FileStamp {
  dev_t device = 0;
  ino_t inode = 0;
  off_t size = 0;
  int64_t mtimeSeconds = 0;
  int64_t mtimeNanoseconds = 0;
  bool operator==(const FileStamp &) const = default;
};

std::optional<FileStamp> stampOf(const std::string &path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0)
    return std::nullopt;
  return FileStamp{st.st_dev, st.st_ino, st.st_size, st.st_mtim.tv_sec, st.st_mtim.tv_nsec};
}

// One read of a file, kept with its error so a bad file is not read twice.
template <typename T> struct CachedRead {
  std::optional<T> value;
  std::string error;
};

struct CachedFile {
  FileStamp stamp;
  std::optional<CachedRead<ElfDynamicInfo>> dynamic;
  std::optional<CachedRead<std::vector<MarkerSite>>> sites;
};

// Sets `symbolAddress` on every argument operand whose symbol the file defines.
bool resolveSymbols(const std::string &path, std::vector<MarkerSite> &sites, std::string &error) {
  std::set<std::string> names;
  for (const MarkerSite &site : sites)
    for (const ArgSpec &arg : site.args)
      std::visit(
          [&](const auto &operand) {
            if constexpr (!std::is_same_v<std::decay_t<decltype(operand)>, RegisterOperand>)
              if (!operand.symbol.empty())
                names.insert(operand.symbol);
          },
          arg.operand);
  std::optional<std::map<std::string, uint64_t>> addresses =
      ElfSymbols::addresses(path, names, error);
  if (!addresses)
    return false;
  for (MarkerSite &site : sites)
    for (ArgSpec &arg : site.args)
      std::visit(
          [&](auto &operand) {
            if constexpr (!std::is_same_v<std::decay_t<decltype(operand)>, RegisterOperand>)
              if (auto found = addresses->find(operand.symbol); found != addresses->end())
                operand.symbolAddress = found->second;
          },
          arg.operand);
  return true;
}

// Every file's dynamic section and notes, read once per version of the file for the
// life of the process: pass 2 and listing ask for the same libraries many times.
class FileCache {
public:
  static FileCache &instance() {
    static FileCache cache;
    return cache;
  }

  std::optional<ElfDynamicInfo> dynamic(const std::string &path, std::string &error) {
    return cached(path, &CachedFile::dynamic, error,
                  [&](std::string &why) { return ElfDynamicInfo::read(path, why); });
  }

  std::optional<std::vector<MarkerSite>> sites(const std::string &path, std::string &error) {
    return cached(path, &CachedFile::sites, error, [&](std::string &why) {
      std::optional<std::vector<MarkerSite>> sites = SdtNoteReader::read(path, why);
      if (sites && !resolveSymbols(path, *sites, why))
        sites.reset();
      return sites;
    });
  }

private:
  template <typename T, typename Read>
  std::optional<T> cached(const std::string &path, std::optional<CachedRead<T>> CachedFile::*slot,
                          std::string &error, Read read) {
    std::lock_guard lock(mutex_);
    std::optional<FileStamp> stamp = stampOf(path);
    if (!stamp) // missing: let the reader say why, and cache nothing
      return read(error);
    CachedFile &file = files_[path];
    if (!(file.stamp == *stamp))
      file = CachedFile{*stamp, std::nullopt, std::nullopt};
    std::optional<CachedRead<T>> &entry = file.*slot;
    if (!entry) {
      entry.emplace();
      entry->value = read(entry->error);
    }
    if (!entry->value)
      error = entry->error;
    return entry->value;
  }

  std::mutex mutex_;
  std::map<std::string, CachedFile> files_;
};

bool globMatches(const std::string &pattern, const std::string &text) {
  return fnmatch(pattern.c_str(), text.c_str(), 0) == 0;
}

// The canonical path of an existing ELF file, or nullopt with the error naming `name`.
std::optional<std::string> canonicalElf(const std::string &name, std::string &error) {
  std::error_code ec;
  fs::path canonical = fs::canonical(name, ec);
  if (ec) {
    error = "no such file: " + name;
    return std::nullopt;
  }
  // Regular files holding at least an ELF header, checked before opening: opening
  // a FIFO, or reading /proc files (size 0) such as /proc/kmsg, can block.
  auto notElf = [&] {
    error = "not an ELF file: " + canonical.string();
    return std::nullopt;
  };
  constexpr uintmax_t kElfHeaderBytes = 64;
  if (!fs::is_regular_file(canonical, ec) || fs::file_size(canonical, ec) < kElfHeaderBytes || ec)
    return notElf();
  char magic[4] = {};
  std::ifstream in(canonical, std::ios::binary);
  if (!in.read(magic, sizeof magic) || std::string_view(magic, sizeof magic) != "\x7f"
                                                                                "ELF")
    return notElf();
  return canonical.string();
}

// The objects a query searches, by canonical path, or nullopt with `error` set.
std::optional<std::vector<std::string>>
objectsToSearch(const std::string &program, const std::string &library, std::string &error) {
  FileCache &cache = FileCache::instance();
  if (library.find('/') != std::string::npos) {
    std::optional<std::string> path = canonicalElf(library, error);
    if (!path)
      return std::nullopt;
    return std::vector<std::string>{*path};
  }
  std::optional<ElfDynamicInfo> info = cache.dynamic(program, error);
  if (!info)
    return std::nullopt;
  LibraryResolver resolver([&cache](const std::string &path) {
    std::string ignored; // a candidate that is not a readable ELF file is passed over
    return cache.dynamic(path, ignored);
  });
  std::vector<LinkedObject> linkMap = resolver.linkMap(program, *info);
  std::vector<std::string> objects;
  if (library.empty()) {
    objects.push_back(program);
    for (size_t i = 1; i < linkMap.size(); ++i)
      if (!LibraryResolver::isSystemLibrary(linkMap[i].path))
        objects.push_back(linkMap[i].path);
    return objects;
  }
  for (size_t i = 1; i < linkMap.size(); ++i)
    if (globMatches(library, linkMap[i].neededAs) ||
        globMatches(library, fs::path(linkMap[i].path).filename().string()))
      objects.push_back(linkMap[i].path);
  if (objects.empty()) {
    error = "no library matching \"" + library + "\" among those " + program + " needs";
    return std::nullopt;
  }
  return objects;
}

} // namespace

std::optional<std::string> MarkerCatalog::resolveExecutable(const std::string &name,
                                                            std::string &error) {
  if (name.empty()) {
    error = "no such file: \"\"";
    return std::nullopt;
  }
  if (name.find('/') != std::string::npos)
    return canonicalElf(name, error);
  // execvp's search: each $PATH entry (empty = the current directory) in order, the
  // first executable regular file wins; without PATH, /bin:/usr/bin.
  const char *env = std::getenv("PATH");
  std::string list = env ? env : "/bin:/usr/bin";
  size_t start = 0;
  while (start <= list.size()) {
    size_t end = list.find(':', start);
    if (end == std::string::npos)
      end = list.size();
    std::string dir = list.substr(start, end - start);
    std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    std::error_code ec;
    if (fs::is_regular_file(candidate, ec) && access(candidate.c_str(), X_OK) == 0)
      return canonicalElf(candidate, error);
    start = end + 1;
  }
  error = "no such file: " + name + " (not found in $PATH)";
  return std::nullopt;
}

std::optional<std::string> MarkerCatalog::executableOfProcess(int64_t pid, std::string &error) {
  std::string link = "/proc/" + std::to_string(pid) + "/exe";
  std::error_code ec;
  fs::path exe = fs::read_symlink(link, ec);
  if (ec) {
    error = ec == std::errc::permission_denied
                ? "process " + std::to_string(pid) + ": permission denied reading " + link +
                      " (tracing another user's process needs root or CAP_SYS_PTRACE)"
                : "no such process " + std::to_string(pid);
    return std::nullopt;
  }
  // A replaced or deleted executable reads "PATH (deleted)": /proc/PID/exe
  // still opens it, but markers are looked up by path.
  return canonicalElf(exe.string(), error);
}

bool MarkerCatalog::isProcessGlob(const std::string &process) {
  return process.find_first_of("*?[") != std::string::npos;
}

std::optional<std::vector<std::string>> MarkerCatalog::expandProcessGlob(const std::string &pattern,
                                                                         std::string &error) {
  glob_t matches{};
  int rc = glob(pattern.c_str(), 0, nullptr, &matches);
  std::set<std::string> files;
  size_t notElf = 0;
  if (rc == 0)
    for (size_t i = 0; i < matches.gl_pathc; ++i) {
      std::string ignored; // scripts and directories a glob catches are passed over
      if (std::optional<std::string> elf = canonicalElf(matches.gl_pathv[i], ignored))
        files.insert(*elf);
      else
        ++notElf;
    }
  globfree(&matches);
  if (files.empty()) {
    error = notElf == 0
                ? "no file matches process(\"" + pattern + "\")"
                : "no ELF file matches process(\"" + pattern + "\") (" + std::to_string(notElf) +
                      (notElf == 1 ? " other file does)" : " other files do)");
    return std::nullopt;
  }
  return std::vector<std::string>(files.begin(), files.end());
}

std::string MarkerCatalog::scriptMarkerName(const std::string &written) {
  std::string name;
  for (char ch : written)
    name += ch == '-' ? std::string("__") : std::string(1, ch);
  return name;
}

std::string MarkerCatalog::commandProgram(const std::string &command) {
  wordexp_t words{};
  if (int rc = wordexp(command.c_str(), &words, WRDE_NOCMD); rc != 0) {
    if (rc == WRDE_NOSPACE) // partly allocated
      wordfree(&words);
    return "";
  }
  std::string program = words.we_wordc > 0 ? words.we_wordv[0] : "";
  wordfree(&words);
  return program;
}

MarkerQueryResult MarkerCatalog::find(const MarkerQuery &q) {
  MarkerQueryResult result;
  const std::string &target = q.process.empty() ? q.targetCommand : q.process;
  if (target.empty()) {
    result.error = "process.mark needs a target: use process(\"PATH\"), -c CMD or -x PID";
    return result;
  }
  std::optional<std::string> program = resolveExecutable(target, result.error);
  if (!program)
    return result;
  result.program = *program;
  std::optional<std::vector<std::string>> objects =
      objectsToSearch(*program, q.library, result.error);
  if (!objects)
    return result;

  result.objects = *objects;
  std::set<std::string> names;
  for (const std::string &object : *objects) {
    std::optional<std::vector<MarkerSite>> sites =
        FileCache::instance().sites(object, result.error);
    if (!sites) {
      result.sites.clear();
      return result;
    }
    for (const MarkerSite &site : *sites) {
      names.insert(site.name);
      if (globMatches(q.provider, site.provider) && globMatches(q.name, site.name))
        result.sites.push_back(CatalogSite{object, site});
    }
  }
  result.allNames.assign(names.begin(), names.end());
  return result;
}

} // namespace sonde::probes::marker
