#include "probes/marker/LibraryResolver.h"

#include <cstdlib>
#include <elf.h>
#include <filesystem>
#include <fstream>
#include <glob.h>
#include <set>
#include <string_view>

namespace sonde::probes::marker {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kSystemDirs[] = {"/lib", "/usr/lib", "/lib64", "/usr/lib64"};

std::vector<std::string> split(std::string_view text, std::string_view separators) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    size_t end = text.find_first_of(separators, start);
    parts.emplace_back(text.substr(start, end == std::string_view::npos ? end : end - start));
    if (end == std::string_view::npos)
      return parts;
    start = end + 1;
  }
}

std::string directoryOf(const std::string &path) {
  std::string parent = fs::path(path).parent_path().string();
  return parent.empty() ? "." : parent;
}

// A DT_RPATH/DT_RUNPATH list with `$ORIGIN` expanded to `origin`. An empty entry is
// the current directory, as for ld.so; an entry with another dynamic-string token
// ($LIB, $PLATFORM) is dropped rather than guessed.
std::vector<std::string> expandSearchPath(const std::string &list, const std::string &origin) {
  std::vector<std::string> dirs;
  for (std::string entry : split(list, ":")) {
    for (std::string_view token : {"${ORIGIN}", "$ORIGIN"})
      for (size_t at; (at = entry.find(token)) != std::string::npos;)
        entry.replace(at, token.size(), origin);
    if (entry.find('$') != std::string::npos)
      continue;
    dirs.push_back(entry.empty() ? "." : entry);
  }
  return dirs;
}

// The directories /etc/ld.so.conf lists (with its `include` globs), which ld.so
// searches through its cache; read once.
void readLdSoConf(const std::string &path, std::vector<std::string> &dirs, int depth) {
  std::ifstream in(path);
  std::string line;
  while (depth < 8 && std::getline(in, line)) {
    line = line.substr(0, line.find('#'));
    size_t begin = line.find_first_not_of(" \t");
    if (begin == std::string::npos)
      continue;
    size_t end = line.find_last_not_of(" \t\r");
    line = line.substr(begin, end - begin + 1);
    if (line.starts_with("include") && line.size() > 7 && (line[7] == ' ' || line[7] == '\t')) {
      std::string pattern = line.substr(line.find_first_not_of(" \t", 7));
      if (!pattern.starts_with('/'))
        pattern = directoryOf(path) + "/" + pattern;
      glob_t matches{};
      if (glob(pattern.c_str(), 0, nullptr, &matches) == 0)
        for (size_t i = 0; i < matches.gl_pathc; ++i)
          readLdSoConf(matches.gl_pathv[i], dirs, depth + 1);
      globfree(&matches);
    } else if (line.starts_with('/')) {
      dirs.push_back(line);
    }
  }
}

const std::vector<std::string> &ldSoConfDirs() {
  static const std::vector<std::string> dirs = [] {
    std::vector<std::string> result;
    readLdSoConf("/etc/ld.so.conf", result, 0);
    return result;
  }();
  return dirs;
}

// ld.so's built-in directories for an object of this class and machine.
std::vector<std::string> defaultDirs(const ElfDynamicInfo &info) {
  std::vector<std::string> dirs;
  if (info.elfClass == ELFCLASS64 && info.machine == EM_X86_64)
    dirs = {"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu"};
  if (info.elfClass == ELFCLASS64)
    dirs.insert(dirs.end(), {"/lib64", "/usr/lib64"});
  dirs.insert(dirs.end(), {"/lib", "/usr/lib"});
  return dirs;
}

} // namespace

bool LibraryResolver::isSystemLibrary(const std::string &path) {
  fs::path dir = fs::path(path).parent_path();
  auto isSystemDir = [](const fs::path &d) {
    for (std::string_view system : kSystemDirs)
      if (d == system)
        return true;
    return false;
  };
  if (isSystemDir(dir))
    return true;
  // A multiarch directory is named by a GNU triplet: x86_64-linux-gnu, i386-linux-gnu.
  return dir.filename().string().find("-linux-") != std::string::npos &&
         isSystemDir(dir.parent_path());
}

std::optional<std::pair<std::string, ElfDynamicInfo>>
LibraryResolver::find(const std::vector<LinkedObject> &objects, size_t index,
                      const std::string &name) const {
  const ElfDynamicInfo &program = objects.front().info;
  auto tryPath =
      [&](const std::string &candidate) -> std::optional<std::pair<std::string, ElfDynamicInfo>> {
    std::optional<ElfDynamicInfo> info = reader_(candidate);
    if (info && info->compatibleWith(program))
      return std::make_pair(candidate, std::move(*info));
    return std::nullopt;
  };
  if (name.find('/') != std::string::npos)
    return tryPath(name);

  std::vector<std::string> dirs;
  const LinkedObject &needer = objects[index];
  if (!needer.info.runpath) {
    // DT_RPATH of the needing object, then of the object that loaded it, up to the
    // program; each `$ORIGIN` is its own object's directory.
    for (std::optional<size_t> at = index; at; at = objects[*at].loader)
      if (const std::optional<std::string> &rpath = objects[*at].info.rpath)
        for (std::string &dir : expandSearchPath(*rpath, directoryOf(objects[*at].openedAs)))
          dirs.push_back(std::move(dir));
  }
  if (const char *env = std::getenv("LD_LIBRARY_PATH"); env && *env)
    for (std::string &dir : split(env, ":;"))
      dirs.push_back(dir.empty() ? "." : std::move(dir));
  if (needer.info.runpath)
    for (std::string &dir : expandSearchPath(*needer.info.runpath, directoryOf(needer.openedAs)))
      dirs.push_back(std::move(dir));
  dirs.insert(dirs.end(), ldSoConfDirs().begin(), ldSoConfDirs().end());
  for (std::string &dir : defaultDirs(program))
    dirs.push_back(std::move(dir));

  for (const std::string &dir : dirs)
    if (auto found = tryPath(dir + "/" + name))
      return found;
  return std::nullopt;
}

std::vector<LinkedObject> LibraryResolver::linkMap(const std::string &program,
                                                   const ElfDynamicInfo &info) const {
  std::vector<LinkedObject> objects;
  objects.push_back(LinkedObject{program, program, "", std::nullopt, info});
  std::set<std::string> loadedPaths = {program};
  std::set<std::string> loadedNames;
  for (size_t index = 0; index < objects.size(); ++index) {
    std::vector<std::string> needed = objects[index].info.needed;
    for (const std::string &name : needed) {
      // ld.so loads a name once, whichever object asks for it again.
      if (!loadedNames.insert(name).second)
        continue;
      std::optional<std::pair<std::string, ElfDynamicInfo>> found = find(objects, index, name);
      if (!found)
        continue;
      std::error_code ec;
      std::string canonical = fs::canonical(found->first, ec).string();
      if (ec || !loadedPaths.insert(canonical).second)
        continue;
      objects.push_back(
          LinkedObject{canonical, found->first, name, index, std::move(found->second)});
    }
  }
  return objects;
}

} // namespace sonde::probes::marker
