#include "compile/resources.h"

#include <cctype>

#include "util/strings.h"

namespace kopt::compile {

namespace {

// The text between the first pair of single quotes after `key`, or empty.
std::string quoted_after(std::string_view line, std::string_view key, size_t nth = 0) {
  auto pos = line.find(key);
  if (pos == std::string_view::npos) return "";
  pos += key.size();
  for (size_t k = 0;; ++k) {
    auto a = line.find('\'', pos);
    if (a == std::string_view::npos) return "";
    auto b = line.find('\'', a + 1);
    if (b == std::string_view::npos) return "";
    if (k == nth) return std::string(line.substr(a + 1, b - a - 1));
    pos = b + 1;
  }
}

std::optional<int64_t> leading_number(std::string_view s) {
  size_t i = 0;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
  if (i == 0) return std::nullopt;
  return std::stoll(std::string(s.substr(0, i)));
}

// "Used 32 registers, used 0 barriers, 4096 bytes smem, 200 bytes cumulative stack size"
void parse_used_line(std::string_view text, KernelResources& r) {
  for (auto piece : util::split(text, ',')) {
    std::string p = util::trim(piece);
    std::string_view v = p;
    if (util::starts_with(v, "Used ") || util::starts_with(v, "used ")) v.remove_prefix(5);
    auto n = leading_number(v);
    if (!n) continue;
    auto unit = v.substr(v.find(' ') == std::string_view::npos ? v.size() : v.find(' ') + 1);
    if (unit == "registers") r.registers = static_cast<int>(*n);
    else if (unit == "barriers") r.barriers = static_cast<int>(*n);
    else if (unit == "bytes smem") r.shared_bytes = *n;
  }
  if (!r.shared_bytes && r.registers) r.shared_bytes = 0;  // ptxas omits "smem" when there is none
}

// "200 bytes stack frame, 360 bytes spill stores, 384 bytes spill loads"
bool parse_frame_line(std::string_view text, KernelResources& r) {
  bool any = false;
  for (auto piece : util::split(text, ',')) {
    std::string p = util::trim(piece);
    auto n = leading_number(p);
    if (!n) continue;
    std::optional<int64_t>* field = p.ends_with("bytes stack frame")    ? &r.stack_frame_bytes
                                    : p.ends_with("bytes spill stores") ? &r.spill_store_bytes
                                    : p.ends_with("bytes spill loads")  ? &r.spill_load_bytes
                                                                        : nullptr;
    if (field) {
      *field = *n;
      any = true;
    }
  }
  return any;
}

KernelResources& find_or_add(std::vector<KernelResources>& v, const std::string& name, const std::string& arch) {
  for (auto& r : v)
    if (r.name == name && r.arch == arch) return r;
  v.push_back({});
  v.back().name = name;
  v.back().arch = arch;
  return v.back();
}

}  // namespace

std::vector<KernelResources> parse_ptxas_verbose(std::string_view log) {
  std::vector<KernelResources> out;
  std::string arch, entry_name, props_name;
  for (const auto& raw : util::split_lines(log)) {
    std::string line = util::trim(raw);
    std::string_view info = line;
    if (util::starts_with(info, "ptxas info")) {
      auto colon = info.find(':');
      info = colon == std::string_view::npos ? std::string_view{} : info.substr(colon + 1);
      std::string body = util::trim(info);
      if (util::starts_with(body, "Compiling entry function")) {
        entry_name = quoted_after(body, "function", 0);
        std::string a = quoted_after(body, "function", 1);
        if (!a.empty()) arch = a;
        if (!entry_name.empty()) find_or_add(out, entry_name, arch).entry = true;
        props_name.clear();
      } else if (util::starts_with(body, "Function properties for ")) {
        props_name = util::trim(std::string_view(body).substr(std::string_view("Function properties for ").size()));
        auto& r = find_or_add(out, props_name, arch);
        r.entry = props_name == entry_name;
      } else if (util::starts_with(body, "Used ")) {
        const std::string& target = !entry_name.empty() ? entry_name : props_name;
        if (!target.empty()) parse_used_line(body, find_or_add(out, target, arch));
      } else if (util::starts_with(body, "Compile time")) {
        entry_name.clear();  // the entry's block ends; later "Function properties" are device functions
      }
    } else if (!props_name.empty() && line.find("bytes stack frame") != std::string::npos) {
      parse_frame_line(line, find_or_add(out, props_name, arch));
    }
  }
  return out;
}

std::vector<KernelResources> parse_cuobjdump_resource_usage(std::string_view text) {
  std::vector<KernelResources> out;
  std::string arch, name;
  for (const auto& raw : util::split_lines(text)) {
    std::string line = util::trim(raw);
    if (util::starts_with(line, "arch = ")) {
      arch = util::trim(std::string_view(line).substr(7));
      name.clear();
    } else if (util::starts_with(line, "Function ") && line.back() == ':') {
      name = util::trim(std::string_view(line).substr(9, line.size() - 10));
    } else if (!name.empty() && util::starts_with(line, "REG:")) {
      auto& r = find_or_add(out, name, arch);
      for (const auto& tok : util::split(line, ' ')) {
        auto c = tok.find(':');
        if (c == std::string::npos) continue;
        std::string key = tok.substr(0, c);
        auto n = leading_number(std::string_view(tok).substr(c + 1));
        if (!n) continue;
        if (key == "REG") r.registers = static_cast<int>(*n);
        else if (key == "STACK") r.stack_frame_bytes = *n;
        else if (key == "SHARED") r.shared_bytes = *n;
        else if (key == "LOCAL") r.local_bytes = *n;
      }
      name.clear();
    }
  }
  return out;
}

util::Json to_json(const KernelResources& r) {
  auto opt = [](const auto& o) { return o ? util::Json(*o) : util::Json(nullptr); };
  return {{"name", r.name},
          {"arch", r.arch},
          {"entry", r.entry},
          {"registers", opt(r.registers)},
          {"barriers", opt(r.barriers)},
          {"shared_bytes", opt(r.shared_bytes)},
          {"stack_frame_bytes", opt(r.stack_frame_bytes)},
          {"spill_store_bytes", opt(r.spill_store_bytes)},
          {"spill_load_bytes", opt(r.spill_load_bytes)},
          {"local_bytes", opt(r.local_bytes)}};
}

Result<KernelResources> resources_from_json(const util::Json& j) {
  if (!j.is_object() || !j.contains("name") || !j["name"].is_string())
    return input_error("kernel resources must be an object with a 'name'");
  KernelResources r;
  r.name = j["name"].get<std::string>();
  r.arch = j.value("arch", "");
  r.entry = j.value("entry", true);
  auto get_int = [&](const char* k, std::optional<int>& dst) {
    if (j.contains(k) && j[k].is_number_integer()) dst = j[k].get<int>();
  };
  auto get_i64 = [&](const char* k, std::optional<int64_t>& dst) {
    if (j.contains(k) && j[k].is_number_integer()) dst = j[k].get<int64_t>();
  };
  get_int("registers", r.registers);
  get_int("barriers", r.barriers);
  get_i64("shared_bytes", r.shared_bytes);
  get_i64("stack_frame_bytes", r.stack_frame_bytes);
  get_i64("spill_store_bytes", r.spill_store_bytes);
  get_i64("spill_load_bytes", r.spill_load_bytes);
  get_i64("local_bytes", r.local_bytes);
  return r;
}

}  // namespace kopt::compile
