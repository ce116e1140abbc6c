#include <ember/nn/serialize.h>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <tuple>

#include <ember/autograd/grad_mode.h>
#include <ember/core/error.h>
#include <ember/nn/json.h>
#include <ember/nn/module.h>

namespace ember {
namespace {

constexpr uint64_t kMaxHeader = 100ull * 1024 * 1024;  // as the safetensors reference reader

struct DtypeName {
  DType dtype;
  const char* name;
};
constexpr DtypeName kDtypes[] = {
    {DType::Float64, "F64"}, {DType::Float32, "F32"}, {DType::Float16, "F16"}, {DType::BFloat16, "BF16"},
    {DType::Int64, "I64"},   {DType::Int32, "I32"},   {DType::Int8, "I8"},     {DType::UInt8, "U8"},
    {DType::Bool, "BOOL"},
};

const char* safetensors_name(DType t) {
  for (const auto& d : kDtypes)
    if (d.dtype == t) return d.name;
  return nullptr;
}

bool little_endian() {
  const uint16_t one = 1;
  unsigned char b;
  std::memcpy(&b, &one, 1);
  return b == 1;
}

std::string errno_text() { return std::strerror(errno); }

// Python's json.dumps of the structure a plain dict of tensors gets from
// ember.save: {"D": [[key, {"T": name}], ...]}.
std::string plain_dict_structure(const NamedTensors& tensors, std::vector<std::string>& names) {
  std::set<std::string> used;
  std::string s = "{\"D\": [";
  for (size_t i = 0; i < tensors.size(); ++i) {
    std::string name = tensors[i].first.empty() ? "tensor" : tensors[i].first;
    while (used.count(name)) name += "_";  // as Python: distinct keys never collide, "" aside
    used.insert(name);
    names.push_back(name);
    if (i) s += ", ";
    s += "[" + json::quote(tensors[i].first) + ", {\"T\": " + json::quote(name) + "}]";
  }
  return s + "]}";
}

void write_atomic(const std::string& path, const std::vector<std::pair<const void*, size_t>>& chunks) {
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  std::string tmp = dir + "/.ember-save-XXXXXX";
  std::vector<char> buf(tmp.begin(), tmp.end());
  buf.push_back('\0');
  const int fd = mkstemp(buf.data());
  EMBER_CHECK(fd >= 0, Error, "ember::save: cannot create a temporary file in ", dir, " for ", path, ": ",
              errno_text());
  tmp = buf.data();
  bool ok = true;
  std::string why;
  for (const auto& [p, n] : chunks) {
    const char* c = static_cast<const char*>(p);
    size_t left = n;
    while (ok && left > 0) {
      const ssize_t w = ::write(fd, c, left);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) {
        ok = false;
        why = errno_text();
        break;
      }
      c += w;
      left -= static_cast<size_t>(w);
    }
  }
  if (ok && ::fsync(fd) != 0) ok = false, why = errno_text();
  if (::close(fd) != 0 && ok) ok = false, why = errno_text();
  if (ok && std::rename(tmp.c_str(), path.c_str()) != 0) ok = false, why = errno_text();
  if (!ok) {
    ::unlink(tmp.c_str());
    throw Error("ember::save: writing " + path + " failed: " + why);
  }
  const int dfd = ::open(dir.c_str(), O_RDONLY);  // makes the rename itself durable
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

}  // namespace

namespace serialize_detail {

void write_file(const std::map<std::string, Tensor>& by_name, const std::string& structure, const std::string& path) {
  EMBER_CHECK(little_endian(), NotImplementedError, "ember::save: big-endian hosts are not supported");
  for (const auto& [name, t] : by_name) {
    EMBER_CHECK(t.defined(), ValueError, "ember::save: tensor \"", name, "\" is undefined");
    EMBER_CHECK(safetensors_name(t.dtype()), TypeError, "ember::save: tensors of dtype ", dtype_name(t.dtype()),
                " cannot be saved");
  }
  const std::string metadata = "{\"version\": 1, \"structure\": " + structure + "}";
  // Header entries go in sorted name order (the map's), as Python's ember.save writes them.
  NoGradGuard no_grad;
  std::vector<Tensor> data;  // contiguous CPU copies, kept alive until written
  std::string head = "{";
  uint64_t offset = 0;
  for (const auto& [name, t] : by_name) {
    Tensor c = t.detach().to(kCPU).contiguous();
    const uint64_t n = static_cast<uint64_t>(c.numel()) * c.element_size();
    head += json::quote(name) + ":{\"dtype\":\"" + safetensors_name(c.dtype()) + "\",\"shape\":[";
    for (size_t d = 0; d < c.shape().size(); ++d) head += (d ? "," : "") + std::to_string(c.shape()[d]);
    head += "],\"data_offsets\":[" + std::to_string(offset) + "," + std::to_string(offset + n) + "]},";
    offset += n;
    data.push_back(c);
  }
  head += "\"__metadata__\":{\"ember\":" + json::quote(metadata) + "}}";
  head.append((8 - head.size() % 8) % 8, ' ');  // keeps the data 8-byte aligned

  unsigned char len[8];
  for (int k = 0; k < 8; ++k) len[k] = static_cast<unsigned char>(static_cast<uint64_t>(head.size()) >> (8 * k));
  std::vector<std::pair<const void*, size_t>> chunks{{len, 8}, {head.data(), head.size()}};
  for (const Tensor& c : data) chunks.emplace_back(c.data_ptr(), c.numel() * c.element_size());
  write_atomic(path, chunks);
}

}  // namespace serialize_detail

void save(const NamedTensors& tensors, const std::string& path) {
  std::vector<std::string> names;
  const std::string structure = plain_dict_structure(tensors, names);
  std::map<std::string, Tensor> by_name;
  for (size_t i = 0; i < tensors.size(); ++i) {
    EMBER_CHECK(tensors[i].second.defined(), ValueError, "ember::save: tensor \"", tensors[i].first,
                "\" is undefined");
    by_name[names[i]] = tensors[i].second;
  }
  serialize_detail::write_file(by_name, structure, path);
}

namespace {

// The "structure" entry of ember's metadata, or a Null value when the file has none.
json::Value ember_structure(const std::string& path, const json::Value* meta) {
  if (!meta || meta->kind != json::Value::Object) return {};
  const json::Value* e = meta->find("ember");
  if (!e || e->kind != json::Value::String) return {};
  json::Value info;
  try {
    info = json::parse(e->text);
  } catch (const std::exception& ex) {
    throw Error(path + ": malformed ember metadata in __metadata__ (" + ex.what() + ")");
  }
  const json::Value* st = info.find("structure");
  return st ? *st : json::Value{};
}

// Keys and tensor names of a plain dict of tensors, when the structure is one.
bool plain_dict_order(const json::Value& structure, std::vector<std::pair<std::string, std::string>>& order) {
  const json::Value* d = structure.find("D");
  if (!d || d->kind != json::Value::Array) return false;  // not a plain dict: header order
  for (const auto& item : d->items) {
    if (item.kind != json::Value::Array || item.items.size() != 2 || item.items[0].kind != json::Value::String)
      return false;
    const json::Value* t = item.items[1].find("T");
    if (!t || t->kind != json::Value::String) return false;
    order.emplace_back(item.items[0].text, t->text);
  }
  return true;
}

}  // namespace

json::Value serialize_detail::read_file(const std::string& path, std::map<std::string, Tensor>& tensors,
                                       NamedTensors& header_order) {
  EMBER_CHECK(little_endian(), NotImplementedError, "ember::load: big-endian hosts are not supported");
  std::ifstream in(path, std::ios::binary);
  EMBER_CHECK(in, Error, "ember::load: cannot open ", path, ": ", errno_text());
  std::string file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EMBER_CHECK(file.size() >= 8, Error, path, ": not a safetensors file (only ", file.size(),
              " bytes, shorter than the 8-byte header length)");
  uint64_t n = 0;
  for (int k = 7; k >= 0; --k) n = (n << 8) | static_cast<unsigned char>(file[k]);
  EMBER_CHECK(n <= kMaxHeader && 8 + n <= file.size(), Error, path,
              ": not a safetensors file or truncated (header length ", n, " but the file has ", file.size(),
              " bytes)");
  json::Value header;
  try {
    header = json::parse(file.substr(8, n));
  } catch (const std::exception& e) {
    throw Error(path + ": not a safetensors file (header is not JSON: " + e.what() + ")");
  }
  EMBER_CHECK(header.kind == json::Value::Object, Error, path,
              ": not a safetensors file (header is not a JSON object)");
  const uint64_t body = 8 + n, data_len = file.size() - body;

  std::vector<std::tuple<uint64_t, uint64_t, std::string>> spans;
  const json::Value* meta = nullptr;
  for (const auto& [name, info] : header.members) {
    if (name == "__metadata__") {
      meta = &info;
      continue;
    }
    const std::string where = path + ": tensor \"" + name + "\"";
    EMBER_CHECK(info.kind == json::Value::Object, Error, where, ": malformed header entry");
    const json::Value* dt = info.find("dtype");
    const json::Value* shape = info.find("shape");
    const json::Value* offs = info.find("data_offsets");
    const DtypeName* dtype = nullptr;
    for (const auto& d : kDtypes)
      if (dt && dt->kind == json::Value::String && dt->text == d.name) dtype = &d;
    EMBER_CHECK(dtype, Error, where, ": unsupported dtype ", dt && dt->kind == json::Value::String ? dt->text : "?");
    EMBER_CHECK(shape && shape->kind == json::Value::Array, Error, where, ": malformed shape");
    Shape sh;
    uint64_t count = 1;
    for (const auto& s : shape->items) {
      EMBER_CHECK(s.is_int() && s.as_int() >= 0, Error, where, ": malformed shape");
      sh.push_back(s.as_int());
      EMBER_CHECK(s.as_int() == 0 || count <= UINT64_MAX / static_cast<uint64_t>(s.as_int()), Error, where,
                  ": shape too large");
      count *= static_cast<uint64_t>(s.as_int());
    }
    EMBER_CHECK(offs && offs->kind == json::Value::Array && offs->items.size() == 2 && offs->items[0].is_int() &&
                    offs->items[1].is_int() && offs->items[0].as_int() >= 0 &&
                    offs->items[0].as_int() <= offs->items[1].as_int(),
                Error, where, ": malformed data_offsets");
    const uint64_t b = offs->items[0].as_int(), e = offs->items[1].as_int();
    EMBER_CHECK(e <= data_len, Error, where, ": data ends at byte ", e, " but the file holds only ", data_len,
                " bytes of data (truncated?)");
    const size_t item = itemsize(dtype->dtype);
    EMBER_CHECK(count <= UINT64_MAX / item && e - b == count * item, Error, where, ": holds ", e - b,
                " bytes but shape ", shape_str(sh), " of ", dtype->name, " needs ", count * item);
    Tensor t = empty(sh, dtype->dtype);
    if (e > b) std::memcpy(t.data_ptr(), file.data() + body + b, e - b);
    if (e > b) spans.emplace_back(b, e, name);  // empty tensors take no bytes
    tensors[name] = t;
    header_order.emplace_back(name, t);
  }
  std::sort(spans.begin(), spans.end());
  for (size_t k = 1; k < spans.size(); ++k) {
    const auto& [b0, e0, n0] = spans[k - 1];
    const auto& [b1, e1, n1] = spans[k];
    (void)b0;
    (void)e1;
    EMBER_CHECK(b1 >= e0, Error, path, ": tensors \"", n0, "\" and \"", n1,
                "\" overlap in the data");
  }

  return ember_structure(path, meta);
}

NamedTensors load(const std::string& path) {
  std::map<std::string, Tensor> tensors;
  NamedTensors header_order;
  const json::Value structure = serialize_detail::read_file(path, tensors, header_order);
  std::vector<std::pair<std::string, std::string>> order;
  if (!plain_dict_order(structure, order)) return header_order;
  NamedTensors out;
  for (const auto& [key, name] : order) {
    auto it = tensors.find(name);
    EMBER_CHECK(it != tensors.end(), Error, path, ": metadata names tensor \"", name, "\", which the file lacks");
    out.emplace_back(key, it->second);
  }
  return out;
}

void save(const nn::Module& module, const std::string& path) { save(module.state_dict(), path); }

void load(nn::Module& module, const std::string& path) { module.load_state_dict(load(path), true); }

}  // namespace ember
