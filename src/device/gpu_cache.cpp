#include "device/gpu_cache.h"

#include <cstdlib>
#include <string_view>

#include "util/fs.h"
#include "util/strings.h"

namespace kopt::device {

namespace {

bool cache_off() { return util::env_off("KOPT_GPU_CACHE"); }

}  // namespace

std::string gpu_cache_key() {
  auto driver = util::read_file("/proc/driver/nvidia/version");
  if (!driver || util::trim(*driver).empty()) return "";
  auto boot = util::read_file("/proc/sys/kernel/random/boot_id");
  std::string key = "v1|" + util::trim(*driver) + "|" + (boot ? util::trim(*boot) : std::string("?"));
  for (const char* v : {"CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER"}) {
    const char* s = std::getenv(v);
    key += std::string("|") + v + "=" + (s ? s : "-");
  }
  return key;
}

util::Json to_cache_json(const DriverInfo& d) {
  util::Json gpus = util::Json::array();
  for (const auto& g : d.gpus)
    gpus.push_back({{"index", g.index}, {"name", g.name}, {"uuid", g.uuid}, {"cc_major", g.cc_major},
                    {"cc_minor", g.cc_minor}, {"sm_count", g.sm_count}, {"l2_bytes", g.l2_bytes},
                    {"memory_bytes", g.memory_bytes}, {"sm_clock_khz", g.sm_clock_khz},
                    {"mem_clock_khz", g.mem_clock_khz}, {"mem_bus_width_bits", g.mem_bus_width_bits},
                    {"smem_per_block_optin_bytes", g.smem_per_block_optin_bytes}});
  return {{"driver_version", d.driver_version}, {"gpus", gpus}};
}

Result<DriverInfo> from_cache_json(const util::Json& j) {
  try {
    DriverInfo d;
    d.driver_version = j.at("driver_version").get<int>();
    for (const auto& x : j.at("gpus")) {
      GpuInfo g;
      g.index = x.at("index").get<int>();
      g.name = x.at("name").get<std::string>();
      g.uuid = x.at("uuid").get<std::string>();
      g.cc_major = x.at("cc_major").get<int>();
      g.cc_minor = x.at("cc_minor").get<int>();
      g.sm_count = x.at("sm_count").get<int>();
      g.l2_bytes = x.at("l2_bytes").get<long long>();
      g.memory_bytes = x.at("memory_bytes").get<long long>();
      g.sm_clock_khz = x.at("sm_clock_khz").get<int>();
      g.mem_clock_khz = x.at("mem_clock_khz").get<int>();
      g.mem_bus_width_bits = x.at("mem_bus_width_bits").get<int>();
      g.smem_per_block_optin_bytes = x.at("smem_per_block_optin_bytes").get<long long>();
      d.gpus.push_back(std::move(g));
    }
    if (d.gpus.empty()) return internal_error("gpus.json: no GPU");
    return d;
  } catch (const std::exception& e) {
    return internal_error(std::string("gpus.json: ") + e.what());
  }
}

Result<DriverInfo> query_gpus_cached(bool* cached, std::filesystem::path file, std::string key) {
  if (cached) *cached = false;
  if (cache_off()) return query_gpus();
  if (key == "\x01") key = gpu_cache_key();
  if (key.empty()) return query_gpus();
  if (file.empty()) file = util::kopt_cache_dir("gpus.json");
  if (auto j = util::read_json(file); j && j->is_object() && j->value("key", std::string()) == key)
    if (auto d = from_cache_json(j->value("answer", util::Json()))) {
      if (cached) *cached = true;
      return d;
    }
  auto d = query_gpus();
  if (d) {
    std::error_code ec;
    std::filesystem::create_directories(file.parent_path(), ec);
    (void)util::write_json_atomic(file, "gpus", {{"key", key}, {"answer", to_cache_json(*d)}});  // a failure costs 0.1 s next time
  }
  return d;
}

}  // namespace kopt::device
