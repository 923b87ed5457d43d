#include "runtime/agent/SiteFinder.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <link.h>
#include <sys/stat.h>

namespace sonde::agent {

namespace {

std::optional<FileId> fileIdOf(const char *path) {
  struct stat st;
  if (stat(path, &st) != 0)
    return std::nullopt;
  return FileId{st.st_dev, st.st_ino};
}

// Calls visit(id, bias) for each loaded object, from inside dl_iterate_phdr.
// glibc holds its loader write lock there, and dlclose unmaps an object under
// that same lock: an object visit is given stays mapped until visit returns,
// so its code and semaphores may be written. (Without this, a -x agent
// patching a library another thread was unloading wrote into freed memory.)
// A file loaded twice (dlmopen) is visited once, at its first load.
template <class Visit> void forEachLoadedObject(Visit visit) {
  struct State {
    Visit *visit;
    std::vector<FileId> seen;
  } state{&visit, {}};
  dl_iterate_phdr(
      [](dl_phdr_info *info, size_t, void *data) {
        auto &st = *static_cast<State *>(data);
        // The main executable comes first, with an empty name.
        bool first = st.seen.empty();
        const char *name = info->dlpi_name && info->dlpi_name[0] ? info->dlpi_name
                           : first                               ? "/proc/self/exe"
                                                                 : nullptr;
        std::optional<FileId> id = name ? fileIdOf(name) : std::nullopt;
        if (!id) {
          st.seen.push_back({}); // keeps "first is the executable" true
          return 0;
        }
        if (std::find(st.seen.begin(), st.seen.end(), *id) != st.seen.end())
          return 0;
        st.seen.push_back(*id);
        (*st.visit)(*id, static_cast<uintptr_t>(info->dlpi_addr));
        return 0;
      },
      &state);
}

std::atomic_ref<uint16_t> semaphoreAt(uintptr_t address) {
  return std::atomic_ref<uint16_t>(*reinterpret_cast<uint16_t *>(address));
}

std::string hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

} // namespace

SiteSet::SiteSet(sonde_module_desc &module, void (*fire)(MarkerHook *, sonde_marker_frame *, bool),
                 std::function<void(const std::string &)> warn)
    : warn_(std::move(warn)) {
  sites_.resize(module.marker_site_count);
  for (uint32_t i = 0; i < module.marker_site_count; ++i) {
    sites_[i].hook.fire = fire;
    sites_[i].desc = &module.marker_sites[i];
    sites_[i].probeIndex = module.marker_sites[i].probe_index;
    sites_[i].handler = module.probes[module.marker_sites[i].probe_index].handler;
  }
}

std::vector<std::optional<FileId>> SiteSet::siteFiles() const {
  std::vector<std::optional<FileId>> ids(sites_.size());
  for (size_t i = 0; i < sites_.size(); ++i)
    ids[i] = i > 0 && std::strcmp(sites_[i].desc->binary, sites_[i - 1].desc->binary) == 0
                 ? ids[i - 1]
                 : fileIdOf(sites_[i].desc->binary);
  return ids;
}

void SiteSet::attachLoaded() {
  std::vector<std::optional<FileId>> files = siteFiles();
  forEachLoadedObject([&](const FileId &id, uintptr_t bias) {
    for (size_t i = 0; i < sites_.size(); ++i) {
      AgentSite &s = sites_[i];
      if (files[i] != id)
        continue;
      uintptr_t address = bias + s.desc->pc;
      if (s.patch && s.patch->address == address && patchInPlace(s.patch))
        continue;
      // Its object was unloaded and loaded again (a -x agent polls for that):
      // the record goes, its bytes are the fresh object's.
      if (s.patch)
        drop(s, false);
      if (s.refused)
        continue;
      attachAt(s, address, bias);
    }
  });
}

void SiteSet::attachAt(AgentSite &s, uintptr_t address, uintptr_t bias) {
  std::string error;
  const auto save = static_cast<VectorSave>(s.desc->vector_save);
  const std::string site = std::string(s.desc->binary) + " " + s.desc->provider + ":" +
                           s.desc->name + " at " + hex(address) + ": ";
  if (s.desc->displaced) {
    s.patch = attachSite(address, s.desc->nop_size, save, s.desc->lean_frame != 0, &s.hook, &error,
                         {s.desc->displaced, bias});
    if (!s.patch)
      warn_(site + "no jump path (" + error + "); the marker traps");
    else if (s.patch->patchSize == 1)
      warn_(site + "a thread could not be moved out of its region; the marker traps");
    error.clear();
  }
  if (!s.patch)
    s.patch = attachSite(address, s.desc->nop_size, save, s.desc->lean_frame != 0, &s.hook, &error);
  if (!s.patch) {
    s.refused = true;
    warn_(site + error + "; marker skipped");
    return;
  }
  s.desc->load_bias = bias;
  s.semaphore = s.desc->semaphore ? bias + s.desc->semaphore : 0;
  if (s.semaphore)
    semaphoreUp(s.semaphore);
}

void SiteSet::drop(AgentSite &s, bool restore) {
  if (restore)
    detachSite(s.patch);
  else
    forgetSite(s.patch);
  s.patch = nullptr;
  if (s.semaphore)
    semaphoreDown(s.semaphore, restore);
  s.semaphore = 0;
}

void SiteSet::forgetUnloaded() {
  std::vector<std::optional<FileId>> files = siteFiles();
  std::vector<bool> loaded(sites_.size());
  forEachLoadedObject([&](const FileId &id, uintptr_t bias) {
    for (size_t i = 0; i < sites_.size(); ++i)
      if (sites_[i].patch && files[i] == id &&
          sites_[i].patch->address == bias + sites_[i].desc->pc)
        loaded[i] = true;
  });
  for (size_t i = 0; i < sites_.size(); ++i)
    if (sites_[i].patch && !loaded[i])
      drop(sites_[i], false);
}

void SiteSet::detachAll() {
  std::vector<std::optional<FileId>> files = siteFiles();
  forEachLoadedObject([&](const FileId &id, uintptr_t bias) {
    for (size_t i = 0; i < sites_.size(); ++i) {
      AgentSite &s = sites_[i];
      // Written back only where the object is still the one patched.
      if (s.patch && files[i] == id && s.patch->address == bias + s.desc->pc &&
          patchInPlace(s.patch))
        drop(s, true);
    }
  });
  for (AgentSite &s : sites_)
    if (s.patch)
      drop(s, false);
}

size_t SiteSet::attachedCount() const {
  size_t n = 0;
  for (const AgentSite &s : sites_)
    n += s.patch != nullptr;
  return n;
}

// Each distinct semaphore counts this agent once, however many sites share it.
void SiteSet::semaphoreUp(uintptr_t address) {
  for (auto &[a, n] : semaphores_) {
    if (a == address) {
      ++n;
      return;
    }
  }
  semaphores_.emplace_back(address, 1);
  semaphoreAt(address).fetch_add(1);
}

void SiteSet::semaphoreDown(uintptr_t address, bool write) {
  for (size_t i = 0; i < semaphores_.size(); ++i) {
    if (semaphores_[i].first != address || --semaphores_[i].second > 0)
      continue;
    semaphores_.erase(semaphores_.begin() + static_cast<std::ptrdiff_t>(i));
    if (write)
      semaphoreAt(address).fetch_sub(1);
    return;
  }
}

} // namespace sonde::agent
