// The module's marker sites in this process: finding each site's object among
// those loaded (dl_iterate_phdr, matched by file identity), checking and patching
// its NOP, counting its semaphore, and undoing all of it. Every write into an
// object's code or semaphores happens under the loader's lock, so it cannot
// race with that object being unloaded.
#pragma once

#include "runtime/agent/SitePatches.h"
#include "runtime/session/ModuleAbi.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace sonde::agent {

// A file as the kernel knows it: a loaded object is matched to a site's binary
// by this, whatever path each was named by.
struct FileId {
  dev_t dev = 0;
  ino_t ino = 0;
  bool operator==(const FileId &) const = default;
};

struct AgentSite {
  MarkerHook hook; // first: the hook pointer is the site pointer
  // The probe this site runs, copied from the module so a hit loads them at once.
  uint32_t probeIndex = 0;
  sonde_handler_fn handler = nullptr;
  sonde_marker_site *desc = nullptr;
  PatchedSite *patch = nullptr; // null: not attached
  uintptr_t semaphore = 0;      // runtime address, 0 none
  bool refused = false;         // its NOP was wrong: warned once, never retried
};

class SiteSet {
public:
  // `fire` runs for every attached site reached; `warn` receives one-line warnings.
  SiteSet(sonde_module_desc &module, void (*fire)(MarkerHook *, sonde_marker_frame *, bool),
          std::function<void(const std::string &)> warn);

  // Attaches every site whose object is loaded now and that is not attached yet
  // (at start, and after each dlopen).
  void attachLoaded();
  // Forgets sites whose object is no longer loaded (after dlclose).
  void forgetUnloaded();
  // Restores every NOP and gives back the semaphores.
  void detachAll();

  size_t attachedCount() const;
  const std::vector<AgentSite> &sites() const { return sites_; }

private:
  // The file identity of each site's binary (stat), in site order.
  std::vector<std::optional<FileId>> siteFiles() const;
  void attachAt(AgentSite &s, uintptr_t address, uintptr_t bias);
  // Ends a site's attachment: its NOP and semaphore written back (`restore`),
  // or the record only dropped (its object is gone or was loaded again).
  void drop(AgentSite &s, bool restore);
  void semaphoreUp(uintptr_t address);
  void semaphoreDown(uintptr_t address, bool write);

  std::vector<AgentSite> sites_;
  std::vector<std::pair<uintptr_t, uint32_t>> semaphores_; // address, attached sites
  std::function<void(const std::string &)> warn_;
};

} // namespace sonde::agent
