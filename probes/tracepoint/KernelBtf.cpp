#include "probes/tracepoint/KernelBtf.h"

#include <bpf/btf.h>
#include <linux/btf.h>

#include <cerrno>
#include <cstring>
#include <mutex>

namespace sonde::probes::tracepoint {

namespace {

// The type under typedefs and qualifiers.
uint32_t skipModifiers(const struct btf *btf, uint32_t id) {
  for (int guard = 0; guard < 64 && id != 0; ++guard) {
    const btf_type *t = btf__type_by_id(btf, id);
    if (!t)
      return 0;
    switch (btf_kind(t)) {
    case BTF_KIND_TYPEDEF:
    case BTF_KIND_CONST:
    case BTF_KIND_VOLATILE:
    case BTF_KIND_RESTRICT:
    case BTF_KIND_TYPE_TAG: id = t->type; continue;
    default: return id;
    }
  }
  return id;
}

// Width and signedness of a scalar (integer, enum, pointer), or false.
bool scalarOf(const struct btf *btf, uint32_t id, uint32_t &size, bool &isSigned) {
  const btf_type *t = id ? btf__type_by_id(btf, id) : nullptr;
  if (!t)
    return false;
  switch (btf_kind(t)) {
  case BTF_KIND_INT:
    size = t->size;
    isSigned = (btf_int_encoding(t) & BTF_INT_SIGNED) != 0;
    return size == 1 || size == 2 || size == 4 || size == 8;
  case BTF_KIND_ENUM:
  case BTF_KIND_ENUM64:
    size = t->size;
    isSigned = btf_kflag(t);
    return size == 1 || size == 2 || size == 4 || size == 8;
  case BTF_KIND_PTR:
    size = 8;
    isSigned = false;
    return true;
  default: return false;
  }
}

// A char[N]: true with N.
bool charArrayOf(const struct btf *btf, uint32_t id, uint32_t &length) {
  const btf_type *t = id ? btf__type_by_id(btf, id) : nullptr;
  if (!t || !btf_is_array(t))
    return false;
  const btf_type *elem = btf__type_by_id(btf, skipModifiers(btf, btf_array(t)->type));
  if (!elem || !btf_is_int(elem) || elem->size != 1)
    return false;
  length = btf_array(t)->nelems;
  return true;
}

// Member `name` of struct/union `id`, looking into anonymous members: its
// byte offset and type, or false (why in *error).
bool findMember(const struct btf *btf, uint32_t id, const std::string &name, uint32_t &offset,
                uint32_t &type, std::string *error) {
  const btf_type *t = btf__type_by_id(btf, id);
  const btf_member *m = btf_members(t);
  for (uint16_t i = 0; i < btf_vlen(t); ++i, ++m) {
    const char *memberName = btf__name_by_offset(btf, m->name_off);
    uint32_t bits = btf_member_bit_offset(t, i);
    if (memberName && name == memberName) {
      if (btf_member_bitfield_size(t, i) != 0 || bits % 8 != 0) {
        *error = "member '" + name + "' is a bitfield, which cannot be read";
        return false;
      }
      offset = bits / 8;
      type = m->type;
      return true;
    }
    if (memberName && *memberName)
      continue;
    uint32_t inner = skipModifiers(btf, m->type);
    const btf_type *it = btf__type_by_id(btf, inner);
    uint32_t innerOffset = 0;
    std::string ignored;
    if (it && (btf_is_struct(it) || btf_is_union(it)) &&
        findMember(btf, inner, name, innerOffset, type, &ignored)) {
      offset = bits / 8 + innerOffset;
      return true;
    }
  }
  *error = "unable to find member '" + name + "'";
  return false;
}

// __bpf_trace_EVENT exists only for a TRACE_EVENT; an event made by DEFINE_EVENT
// (sched_wakeup from sched_wakeup_template) shares its class's. Every
// tracepoint also has __probestub_EVENT with the same arguments (Linux 6.4+).
const btf_type *traceFunctionProto(const struct btf *btf, const std::string &event) {
  int id = btf__find_by_name_kind(btf, ("__bpf_trace_" + event).c_str(), BTF_KIND_FUNC);
  if (id <= 0)
    id = btf__find_by_name_kind(btf, ("__probestub_" + event).c_str(), BTF_KIND_FUNC);
  if (id <= 0)
    return nullptr;
  const btf_type *proto = btf__type_by_id(btf, btf__type_by_id(btf, id)->type);
  return proto && btf_is_func_proto(proto) && btf_vlen(proto) >= 1 ? proto : nullptr;
}

} // namespace

KernelBtf::~KernelBtf() { btf__free(btf_); }

const KernelBtf *KernelBtf::running(std::string *error) {
  static std::once_flag once;
  static std::unique_ptr<KernelBtf> btf;
  static std::string why;
  std::call_once(once, [] {
    struct btf *b = btf__load_vmlinux_btf();
    if (!b)
      why = std::string("the kernel's BTF (/sys/kernel/btf/vmlinux) cannot be read: ") +
            std::strerror(errno);
    else
      btf.reset(new KernelBtf(b));
  });
  if (!btf)
    *error = why;
  return btf.get();
}

std::unique_ptr<KernelBtf> KernelBtf::fromFile(const std::string &path, std::string *error) {
  struct btf *b = btf__parse(path.c_str(), nullptr);
  if (!b) {
    *error = "cannot read BTF from '" + path + "': " + std::strerror(errno);
    return nullptr;
  }
  return std::unique_ptr<KernelBtf>(new KernelBtf(b));
}

std::string KernelBtf::typeName(uint32_t id) const {
  if (id == 0)
    return "void";
  const btf_type *t = btf__type_by_id(btf_, id);
  if (!t)
    return "?";
  std::string name = btf__name_by_offset(btf_, t->name_off) ?: "";
  switch (btf_kind(t)) {
  case BTF_KIND_PTR: {
    std::string target = typeName(t->type);
    return target + (target.back() == '*' ? "*" : " *");
  }
  case BTF_KIND_CONST: return "const " + typeName(t->type);
  case BTF_KIND_VOLATILE: return "volatile " + typeName(t->type);
  case BTF_KIND_STRUCT: return "struct " + name;
  case BTF_KIND_UNION: return "union " + name;
  case BTF_KIND_ENUM:
  case BTF_KIND_ENUM64: return "enum " + name;
  case BTF_KIND_ARRAY:
    return typeName(btf_array(t)->type) + "[" + std::to_string(btf_array(t)->nelems) + "]";
  case BTF_KIND_FUNC_PROTO: return "function";
  case BTF_KIND_RESTRICT:
  case BTF_KIND_TYPE_TAG: return typeName(t->type);
  default: return name;
  }
}

std::optional<std::vector<TracepointArgument>>
KernelBtf::arguments(const std::string &event) const {
  const btf_type *proto = traceFunctionProto(btf_, event);
  if (!proto)
    return std::nullopt;
  std::vector<TracepointArgument> args;
  const btf_param *p = btf_params(proto);
  for (uint16_t i = 1; i < btf_vlen(proto); ++i) // [0] is `void *__data`
    args.push_back({btf__name_by_offset(btf_, p[i].name_off) ?: "", typeName(p[i].type)});
  return args;
}

std::optional<uint32_t> KernelBtf::memberOffset(const std::string &structName,
                                                const std::string &member) const {
  int id = btf__find_by_name_kind(btf_, structName.c_str(), BTF_KIND_STRUCT);
  uint32_t offset = 0, type = 0;
  std::string ignored;
  if (id <= 0 || !findMember(btf_, static_cast<uint32_t>(id), member, offset, type, &ignored))
    return std::nullopt;
  return offset;
}

std::optional<BtfAccess> KernelBtf::resolve(const std::string &event, const ast::TargetSymbol &sym,
                                            std::string *error) const {
  const btf_type *proto = traceFunctionProto(btf_, event);
  if (!proto) {
    *error = "the kernel's BTF does not describe tracepoint '" + event + "'";
    return std::nullopt;
  }
  const std::string name = sym.name.substr(1);
  const btf_param *params = btf_params(proto);
  std::string alternatives;
  uint32_t type = 0;
  BtfAccess a;
  bool found = false;
  for (uint16_t i = 1; i < btf_vlen(proto); ++i) {
    const char *argName = btf__name_by_offset(btf_, params[i].name_off);
    alternatives += std::string(alternatives.empty() ? "$" : ", $") + (argName ?: "");
    if (argName && name == argName) {
      a.argIndex = i - 1;
      type = skipModifiers(btf_, params[i].type);
      found = true;
    }
  }
  if (!found) {
    *error = "unable to find tracepoint variable '" + sym.name +
             "' (alternatives: " + alternatives + ")";
    return std::nullopt;
  }
  std::string path = sym.name;
  if (sym.components.empty()) {
    if (sym.addressOf) {
      *error = "cannot take the address of tracepoint argument '" + sym.name + "'";
      return std::nullopt;
    }
    if (!scalarOf(btf_, type, a.argSize, a.argSigned)) {
      *error = "tracepoint argument '" + sym.name + "' has type " + typeName(type) +
               ", which cannot be read as a value";
      return std::nullopt;
    }
    return a;
  }
  // Where the current object is: the argument's own value until memory is read.
  auto loadPointer = [&] {
    if (!a.readsMemory)
      a.readsMemory = true;
    else
      a.pointerHops.push_back(a.finalOffset);
    a.finalOffset = 0;
  };
  for (const ast::TargetComponent &c : sym.components) {
    const btf_type *t = btf__type_by_id(btf_, type);
    if (c.kind == ast::TargetComponent::Kind::Member) {
      path += "->" + c.member;
      if (t && btf_is_ptr(t)) {
        loadPointer();
        type = skipModifiers(btf_, t->type);
        t = btf__type_by_id(btf_, type);
      } else if (!a.readsMemory) {
        *error = "'" + path + "': " + sym.name + " is not a pointer";
        return std::nullopt;
      }
      if (!t || !(btf_is_struct(t) || btf_is_union(t))) {
        *error = "'" + path + "': not a struct or union (" + typeName(type) + ")";
        return std::nullopt;
      }
      uint32_t offset = 0, memberType = 0;
      std::string why;
      if (!findMember(btf_, type, c.member, offset, memberType, &why)) {
        *error = "'" + path + "': " + why + " in " + typeName(type);
        return std::nullopt;
      }
      a.finalOffset += offset;
      type = skipModifiers(btf_, memberType);
      continue;
    }
    auto *number = dynamic_cast<const ast::NumberLit *>(c.index.get());
    path += "[]";
    if (!number || number->value < 0) {
      *error = "'" + path + "': only constant, non-negative indexes are supported";
      return std::nullopt;
    }
    uint32_t elem = 0;
    if (t && btf_is_array(t)) {
      elem = skipModifiers(btf_, btf_array(t)->type);
    } else if (t && btf_is_ptr(t)) {
      loadPointer();
      elem = skipModifiers(btf_, t->type);
    } else {
      *error = "'" + path + "': not an array or pointer (" + typeName(type) + ")";
      return std::nullopt;
    }
    int64_t size = btf__resolve_size(btf_, elem);
    if (size <= 0) {
      *error = "'" + path + "': elements of unknown size";
      return std::nullopt;
    }
    a.finalOffset += static_cast<uint32_t>(number->value * size);
    type = elem;
  }
  if (sym.addressOf) {
    a.result = BtfAccess::Result::Address;
    return a;
  }
  if (scalarOf(btf_, type, a.size, a.isSigned))
    return a;
  if (charArrayOf(btf_, type, a.length)) {
    a.result = BtfAccess::Result::String;
    return a;
  }
  *error = "'" + path + "' has type " + typeName(type) + ", which cannot be read as a value";
  return std::nullopt;
}

} // namespace sonde::probes::tracepoint
