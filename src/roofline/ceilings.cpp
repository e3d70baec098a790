#include "roofline/ceilings.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace kopt::roofline {

const RoofInfo& roof_info(Roof r) {
  for (const auto& i : kRoofTable)
    if (i.roof == r) return i;
  return kRoofTable[0];  // unreachable: the table covers the enum (checked by a test)
}

std::optional<Roof> parse_roof(std::string_view name) {
  for (const auto& i : kRoofTable)
    if (i.name == name) return i.roof;
  return std::nullopt;
}

std::string_view describe(CeilingSource s) {
  switch (s) {
    case CeilingSource::kMeasured: return "measured";
    case CeilingSource::kDatasheet: return "datasheet";
  }
  return "?";
}

std::string describe_key_change(const CeilingsKey& a, const CeilingsKey& b) {
  std::vector<std::string> d;
  if (a.uuid != b.uuid) d.push_back(fmt::format("GPU {} -> {}", a.uuid, b.uuid));
  if (a.driver_version != b.driver_version) d.push_back(fmt::format("driver {} -> {}", a.driver_version, b.driver_version));
  if (a.sm_clock_max_mhz != b.sm_clock_max_mhz)
    d.push_back(fmt::format("max SM clock {} -> {} MHz", a.sm_clock_max_mhz, b.sm_clock_max_mhz));
  if (a.mem_clock_max_mhz != b.mem_clock_max_mhz)
    d.push_back(fmt::format("max memory clock {} -> {} MHz", a.mem_clock_max_mhz, b.mem_clock_max_mhz));
  if (a.probe_hash != b.probe_hash) d.push_back("the ceilings probe changed");
  std::string out;
  for (const auto& s : d) out += (out.empty() ? "" : ", ") + s;
  return out;
}

const Ceiling* Ceilings::find(Roof r) const {
  auto it = roofs.find(r);
  return it == roofs.end() ? nullptr : &it->second;
}

namespace {

// The DRAM mixes known, all measured ones if any is measured, else the datasheet's.
std::vector<std::pair<DramMixPoint, const Ceiling*>> known_mixes(const Ceilings& c) {
  std::vector<std::pair<DramMixPoint, const Ceiling*>> measured, datasheet;
  for (const auto& m : kDramMixes) {
    const Ceiling* x = c.find(m.roof);
    if (!x || !(x->value > 0)) continue;
    (x->source == CeilingSource::kMeasured ? measured : datasheet).push_back({m, x});
  }
  return measured.empty() ? datasheet : measured;
}

}  // namespace

std::optional<Roof> Ceilings::dram_roof() const {
  std::optional<Roof> best;
  for (const auto& [m, x] : known_mixes(*this))
    if (!best || x->value > find(*best)->value) best = m.roof;
  return best;
}

std::optional<DramRate> Ceilings::dram_rate(std::optional<double> read_fraction) const {
  auto mixes = known_mixes(*this);  // in kDramMixes order: ascending read fraction
  auto top = dram_roof();
  if (mixes.empty() || !top) return std::nullopt;
  auto rate_of = [&](Roof r, std::string rule) {
    const Ceiling* x = find(r);
    return DramRate{r, x->value, x->source, read_fraction, std::move(rule)};
  };
  const std::string top_name(roof_info(*top).name);
  if (!read_fraction)
    return rate_of(*top, fmt::format("read/write mix unknown (the workload model gives only bytes_min): the highest "
                                     "DRAM rate known, {} {:.0f} GB/s", top_name, find(*top)->value));
  const double f = std::clamp(*read_fraction, 0.0, 1.0);
  for (const auto& [m, x] : mixes)
    if (std::abs(m.read_fraction - f) < 1e-9)
      return rate_of(m.roof, fmt::format("read fraction {:.2f}: the {} rate measured for that mix", f, roof_info(m.roof).name));
  if (f < mixes.front().first.read_fraction || f > mixes.back().first.read_fraction)
    return rate_of(*top, fmt::format("read fraction {:.2f}, outside the mixes measured ({:.2f} to {:.2f}): the highest "
                                     "DRAM rate known, {} {:.0f} GB/s", f, mixes.front().first.read_fraction,
                                     mixes.back().first.read_fraction, top_name, find(*top)->value));
  for (size_t i = 0; i + 1 < mixes.size(); ++i) {
    const auto& [lo, xlo] = mixes[i];
    const auto& [hi, xhi] = mixes[i + 1];
    if (f < lo.read_fraction || f > hi.read_fraction) continue;
    const double w = (f - lo.read_fraction) / (hi.read_fraction - lo.read_fraction);
    const double s_per_byte = (1 - w) / xlo->value + w / xhi->value;  // time per byte, linear in the mix
    DramRate r;
    r.roof = w < 0.5 ? lo.roof : hi.roof;
    r.gbps = 1.0 / s_per_byte;
    r.source = xlo->source == CeilingSource::kMeasured && xhi->source == CeilingSource::kMeasured
                   ? CeilingSource::kMeasured : CeilingSource::kDatasheet;
    r.read_fraction = read_fraction;
    r.rule = fmt::format("read fraction {:.2f}: between {} ({:.0f} GB/s at {:.2f}) and {} ({:.0f} GB/s at {:.2f}), "
                         "linear in time per byte", f, roof_info(lo.roof).name, xlo->value, lo.read_fraction,
                         roof_info(hi.roof).name, xhi->value, hi.read_fraction);
    return r;
  }
  return rate_of(*top, "the highest DRAM rate known");  // unreachable: f lies within the mixes' range
}

std::optional<Datasheet> datasheet_for(std::string_view name) {
  auto has = [&](std::string_view s) { return name.find(s) != std::string_view::npos; };
  // Hopper SXM: the same compute for H100 and H200 (dense, no sparsity); only the memory differs.
  auto hopper_sxm = [](std::string label, double dram_gbps) {
    return Datasheet{std::move(label),
                     {{Roof::kDramCopy, dram_gbps},
                      {Roof::kDramRead, dram_gbps},
                      {Roof::kDramTriad, dram_gbps},
                      {Roof::kDramWrite, dram_gbps},
                      {Roof::kFp32Fma, 67},
                      {Roof::kFp64Fma, 34},
                      {Roof::kFp64Tensor, 67},
                      {Roof::kTf32Tensor, 495},
                      {Roof::kFp16Tensor, 990},
                      {Roof::kBf16Tensor, 990},
                      {Roof::kFp8Tensor, 1979},
                      {Roof::kInt8Tensor, 1979}}};
  };
  if (has("H200") && !has("NVL")) return hopper_sxm("H200 SXM datasheet", 4800);
  if (has("H100") && !has("PCIe") && !has("NVL")) return hopper_sxm("H100 SXM datasheet", 3350);
  return std::nullopt;
}

std::vector<Roof> fill_from_datasheet(Ceilings& c, const Datasheet& d) {
  std::vector<Roof> filled;
  for (const auto& [roof, value] : d.values) {
    if (c.roofs.count(roof)) continue;
    Ceiling x;
    x.value = value;
    x.source = CeilingSource::kDatasheet;
    x.note = d.label;
    c.roofs[roof] = x;
    filled.push_back(roof);
  }
  return filled;
}

Ceilings datasheet_ceilings(const Datasheet& d, const CeilingsKey& key, std::string gpu_name, std::string when) {
  Ceilings c;
  c.key = key;
  c.gpu_name = std::move(gpu_name);
  c.measured_at = std::move(when);
  fill_from_datasheet(c, d);
  return c;
}

namespace {

util::Json ceiling_json(Roof r, const Ceiling& c) {
  util::Json j = {{"value", c.value}, {"unit", roof_info(r).unit}, {"source", describe(c.source)}, {"note", c.note}};
  if (c.median_ms) j["median_ms"] = *c.median_ms;
  if (c.min_ms) j["min_ms"] = *c.min_ms;
  if (c.max_ms) j["max_ms"] = *c.max_ms;
  if (c.reps) j["reps"] = c.reps;
  return j;
}

std::optional<double> opt_num(const util::Json& j, const char* k) {
  if (j.contains(k) && j[k].is_number()) return j[k].get<double>();
  return std::nullopt;
}

}  // namespace

util::Json to_json(const Ceilings& c) {
  util::Json roofs = util::Json::object(), skipped = util::Json::object();
  for (const auto& [r, x] : c.roofs) roofs[std::string(roof_info(r).name)] = ceiling_json(r, x);
  for (const auto& [r, why] : c.skipped) skipped[std::string(roof_info(r).name)] = why;
  util::Json j = {{"key",
                   {{"uuid", c.key.uuid},
                    {"driver_version", c.key.driver_version},
                    {"sm_clock_max_mhz", c.key.sm_clock_max_mhz},
                    {"mem_clock_max_mhz", c.key.mem_clock_max_mhz},
                    {"probe_hash", c.key.probe_hash}}},
                  {"gpu_name", c.gpu_name},
                  {"measured_at", c.measured_at},
                  {"roofs", roofs},
                  {"skipped", skipped},
                  {"warnings", c.warnings},
                  {"probe", c.probe}};
  if (auto d = c.dram_roof()) j["dram_roof"] = roof_info(*d).name;
  return j;
}

Result<Ceilings> ceilings_from_json(const util::Json& j) {
  try {
    Ceilings c;
    const auto& k = j.at("key");
    c.key.uuid = k.at("uuid").get<std::string>();
    c.key.driver_version = k.at("driver_version").get<std::string>();
    c.key.sm_clock_max_mhz = k.at("sm_clock_max_mhz").get<int>();
    c.key.mem_clock_max_mhz = k.at("mem_clock_max_mhz").get<int>();
    c.key.probe_hash = k.value("probe_hash", std::string());
    c.gpu_name = j.at("gpu_name").get<std::string>();
    c.measured_at = j.at("measured_at").get<std::string>();
    for (const auto& [name, v] : j.at("roofs").items()) {
      auto r = parse_roof(name);
      if (!r) return input_error("unknown roof '" + name + "'");
      Ceiling x;
      x.value = v.at("value").get<double>();
      if (!(x.value > 0) || !std::isfinite(x.value)) return input_error("roof '" + name + "' has no positive value");
      if (v.at("unit").get<std::string>() != roof_info(*r).unit)
        return input_error("roof '" + name + "' is in " + v.at("unit").get<std::string>() + ", expected " +
                           std::string(roof_info(*r).unit));
      std::string src = v.at("source").get<std::string>();
      if (src == "measured") x.source = CeilingSource::kMeasured;
      else if (src == "datasheet") x.source = CeilingSource::kDatasheet;
      else return input_error("roof '" + name + "' has unknown source '" + src + "'");
      x.note = v.value("note", "");
      x.median_ms = opt_num(v, "median_ms");
      x.min_ms = opt_num(v, "min_ms");
      x.max_ms = opt_num(v, "max_ms");
      x.reps = v.value("reps", 0);
      c.roofs[*r] = x;
    }
    const util::Json skipped = j.value("skipped", util::Json::object());
    for (const auto& [name, why] : skipped.items()) {
      auto r = parse_roof(name);
      if (!r) return input_error("unknown skipped roof '" + name + "'");
      c.skipped[*r] = why.get<std::string>();
    }
    c.warnings = j.value("warnings", std::vector<std::string>{});
    c.probe = j.value("probe", util::Json::object());
    return c;
  } catch (const std::exception& e) {
    return input_error(std::string("malformed ceilings JSON: ") + e.what());
  }
}

std::string format_text(const Ceilings& c) {
  std::string s = fmt::format("Ceilings of {} ({}), driver {}, max clocks SM {} MHz / memory {} MHz, {}\n", c.gpu_name,
                              c.key.uuid, c.key.driver_version, c.key.sm_clock_max_mhz, c.key.mem_clock_max_mhz,
                              c.measured_at);
  auto dram = c.dram_roof();
  for (const auto& info : kRoofTable) {
    const Ceiling* x = c.find(info.roof);
    if (x) {
      std::string timing = x->median_ms ? fmt::format(", median {:.3f} ms of {}", *x->median_ms, x->reps) : "";
      s += fmt::format("  {:<12} {:>9.1f} {:<8} {:<9}{} ({}{})\n", info.name, x->value, info.unit, describe(x->source),
                       dram == info.roof ? " [DRAM roof]" : "", x->note, timing);
    }
    auto sk = c.skipped.find(info.roof);
    if (sk != c.skipped.end()) s += fmt::format("  {:<12} not measured: {}\n", info.name, sk->second);
  }
  for (const auto& w : c.warnings) s += "  warning: " + w + "\n";
  return s;
}

}  // namespace kopt::roofline
