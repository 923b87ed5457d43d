#include "runtime/agent/SiteFinder.h"

#include <atomic>
#include <cstdio>
#include <link.h>
#include <sys/stat.h>

namespace sonde::agent {

namespace {

struct LoadedObject {
  dev_t dev;
  ino_t ino;
  uintptr_t bias; // dlpi_addr: 0 for a non-PIE executable
};

std::vector<LoadedObject> loadedObjects() {
  std::vector<LoadedObject> out;
  dl_iterate_phdr(
      [](dl_phdr_info *info, size_t, void *data) {
        auto &objects = *static_cast<std::vector<LoadedObject> *>(data);
        // The main executable comes first, with an empty name.
        const char *name = info->dlpi_name && info->dlpi_name[0] ? info->dlpi_name
                           : objects.empty()                     ? "/proc/self/exe"
                                                                 : nullptr;
        struct stat st;
        if (name && stat(name, &st) == 0)
          objects.push_back({st.st_dev, st.st_ino, info->dlpi_addr});
        else
          objects.push_back({0, 0, ~uintptr_t{0}}); // keeps "first is the executable" true
        return 0;
      },
      &out);
  return out;
}

const LoadedObject *objectOf(const std::vector<LoadedObject> &objects, const char *binary) {
  struct stat st;
  if (stat(binary, &st) != 0)
    return nullptr;
  for (const LoadedObject &o : objects)
    if (o.dev == st.st_dev && o.ino == st.st_ino && o.bias != ~uintptr_t{0})
      return &o;
  return nullptr;
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

void SiteSet::attachLoaded() {
  std::vector<LoadedObject> objects = loadedObjects();
  for (AgentSite &s : sites_) {
    if (s.patch || s.refused)
      continue;
    const LoadedObject *o = objectOf(objects, s.desc->binary);
    if (!o)
      continue;
    uintptr_t address = o->bias + s.desc->pc;
    std::string error;
    s.patch = attachSite(address, s.desc->nop_size, static_cast<VectorSave>(s.desc->vector_save),
                         s.desc->lean_frame != 0, &s.hook, &error);
    if (!s.patch) {
      s.refused = true;
      warn_(std::string(s.desc->binary) + " " + s.desc->provider + ":" + s.desc->name + " at " +
            hex(address) + ": " + error + "; marker skipped");
      continue;
    }
    s.desc->load_bias = o->bias;
    s.semaphore = s.desc->semaphore ? o->bias + s.desc->semaphore : 0;
    if (s.semaphore)
      semaphoreUp(s.semaphore);
  }
}

void SiteSet::forgetUnloaded() {
  std::vector<LoadedObject> objects = loadedObjects();
  for (AgentSite &s : sites_) {
    if (!s.patch)
      continue;
    const LoadedObject *o = objectOf(objects, s.desc->binary);
    if (o && o->bias + s.desc->pc == s.patch->address)
      continue;
    forgetSite(s.patch);
    s.patch = nullptr;
    if (s.semaphore)
      semaphoreDown(s.semaphore, false);
    s.semaphore = 0;
  }
}

void SiteSet::detachAll() {
  for (AgentSite &s : sites_) {
    if (!s.patch)
      continue;
    detachSite(s.patch);
    s.patch = nullptr;
    if (s.semaphore)
      semaphoreDown(s.semaphore, true);
    s.semaphore = 0;
  }
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
