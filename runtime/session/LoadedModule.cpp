#include "runtime/session/LoadedModule.h"

#include "runtime/format/FormatParser.h"

#include <dlfcn.h>

namespace sonde::session {

std::optional<LoadedModule> LoadedModule::open(const std::string &path, std::string *error) {
  LoadedModule m;
  m.handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!m.handle_) {
    *error = "cannot load module: " + std::string(dlerror());
    return std::nullopt;
  }
  m.desc_ = static_cast<const sonde_module_desc *>(dlsym(m.handle_, SONDE_MODULE_SYMBOL));
  if (!m.desc_) {
    *error = "module " + path + " has no " SONDE_MODULE_SYMBOL " table";
    return std::nullopt;
  }
  if (m.desc_->abi_version != SONDE_MODULE_ABI_VERSION) {
    *error = "module " + path + " was built for module ABI " +
             std::to_string(m.desc_->abi_version) + ", this runtime speaks " +
             std::to_string(SONDE_MODULE_ABI_VERSION);
    return std::nullopt;
  }
  m.layout_ = values::GlobalLayout::deserialize(m.desc_->layout, m.desc_->layout_size, error);
  if (!m.layout_)
    return std::nullopt;
  if (m.layout_->fingerprint() != m.desc_->layout_fingerprint) {
    *error = "module " + path + " has a corrupt global layout";
    return std::nullopt;
  }

  m.formats_.resize(m.desc_->format_count);
  for (uint32_t i = 0; i < m.desc_->format_count; ++i) {
    const char *text = m.desc_->formats[i];
    auto &f = m.formats_[i];
    format::ParsedFormat parsed = format::parseFormat(text);
    if (!parsed.ok()) {
      // The compiler validated every format; a bad one means a corrupt module.
      *error = "module " + path + " has an invalid format string #" + std::to_string(i);
      return std::nullopt;
    }
    f.items = std::move(parsed.items);
    f.spec = SondeFormatSpec{text, f.items.data(), static_cast<uint32_t>(f.items.size()),
                             sonde_format_arg_count(f.items.data(), f.items.size())};
  }

  m.locations_.reserve(m.desc_->location_count);
  for (uint32_t i = 0; i < m.desc_->location_count; ++i) {
    const sonde_location &l = m.desc_->locations[i];
    char buf[1024];
    size_t n = sonde_error_token(l.kind, l.text, l.file, l.line, l.column, buf, sizeof buf);
    m.locations_.emplace_back(buf, n);
  }
  m.siteOfProbe_.assign(m.desc_->probe_count, nullptr);
  for (uint32_t i = 0; i < m.desc_->marker_site_count; ++i) {
    const sonde_marker_site &site = m.desc_->marker_sites[i];
    if (site.probe_index < m.desc_->probe_count)
      m.siteOfProbe_[site.probe_index] = &site;
  }
  return m;
}

LoadedModule::LoadedModule(LoadedModule &&o) noexcept
    : handle_(o.handle_), desc_(o.desc_), layout_(std::move(o.layout_)),
      formats_(std::move(o.formats_)), locations_(std::move(o.locations_)),
      siteOfProbe_(std::move(o.siteOfProbe_)) {
  o.handle_ = nullptr;
  // The specs point into their own item vectors, which moved with them.
}

LoadedModule &LoadedModule::operator=(LoadedModule &&o) noexcept {
  if (this != &o) {
    if (handle_)
      dlclose(handle_);
    handle_ = o.handle_;
    desc_ = o.desc_;
    layout_ = std::move(o.layout_);
    formats_ = std::move(o.formats_);
    locations_ = std::move(o.locations_);
    siteOfProbe_ = std::move(o.siteOfProbe_);
    o.handle_ = nullptr;
  }
  return *this;
}

LoadedModule::~LoadedModule() {
  if (handle_)
    dlclose(handle_);
}

const std::string &LoadedModule::locationText(uint32_t index) const {
  static const std::string none;
  return index < locations_.size() ? locations_[index] : none;
}

} // namespace sonde::session
