#include "roofline/probe_output.h"

#include <cmath>

namespace kopt::roofline {

Result<ProbeOutput> parse_probe_output(std::string_view text) {
  size_t start = std::string_view::npos;
  for (size_t pos = 0; pos < text.size();) {
    if (text[pos] == '{') {
      start = pos;
      break;
    }
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) break;
    pos = nl + 1;
  }
  if (start == std::string_view::npos) return internal_error("the ceilings probe printed no JSON object");
  util::Json j;
  try {
    j = util::Json::parse(text.substr(start));
  } catch (const std::exception& e) {
    return internal_error(std::string("the ceilings probe's output is not valid JSON: ") + e.what());
  }
  if (!j.is_object() || !j.contains("kopt_ceilings_probe"))
    return internal_error("the ceilings probe's output lacks \"kopt_ceilings_probe\" (not the probe's JSON?)");
  if (j.contains("error")) return gate_error("the ceilings probe could not run: " + j["error"].get<std::string>());
  try {
    ProbeOutput p;
    p.device = j.at("device");
    p.gpu_name = p.device.at("name").get<std::string>();
    p.uuid = p.device.at("uuid").get<std::string>();
    if (p.device.contains("driver_version") && p.device["driver_version"].is_string())
      p.driver_version = p.device["driver_version"].get<std::string>();
    p.cuda_driver_version = p.device.value("cuda_driver_version", 0);
    p.sm_clock_max_mhz = p.device.value("sm_clock_max_mhz", 0);
    p.mem_clock_max_mhz = p.device.value("mem_clock_max_mhz", 0);
    p.clocks_seen = j.value("clocks_seen", util::Json::object());
    p.config = j.value("config", util::Json::object());
    for (const auto& m : j.at("measurements")) {
      ProbeMeasurement x;
      x.name = m.at("name").get<std::string>();
      x.skipped = m.value("skipped", false);
      if (x.skipped) {
        x.reason = m.value("reason", "no reason given");
      } else {
        x.unit = m.at("unit").get<std::string>();
        if (!m.at("value").is_number()) return internal_error("probe measurement '" + x.name + "' has no value");
        x.value = m.at("value").get<double>();
        x.median_ms = m.at("median_ms").get<double>();
        x.min_ms = m.value("min_ms", x.median_ms);
        x.max_ms = m.value("max_ms", x.median_ms);
        x.reps = m.value("reps", 0);
        x.note = m.value("note", "");
      }
      p.measurements.push_back(std::move(x));
    }
    return p;
  } catch (const std::exception& e) {
    return internal_error(std::string("the ceilings probe's JSON is malformed: ") + e.what());
  }
}

Result<Ceilings> ceilings_from_probe(const ProbeOutput& p, const CeilingsKey& key, std::string measured_at) {
  Ceilings c;
  c.key = key;
  c.gpu_name = p.gpu_name;
  c.measured_at = std::move(measured_at);
  c.probe = {{"device", p.device}, {"clocks_seen", p.clocks_seen}, {"config", p.config}};
  if (!key.uuid.empty() && !p.uuid.empty() && key.uuid != p.uuid)
    return internal_error("the ceilings probe measured " + p.uuid + " but kopt asked for " + key.uuid);
  bool quick = p.config.value("quick", false);
  for (const auto& m : p.measurements) {
    auto r = parse_roof(m.name);
    if (!r) return internal_error("the ceilings probe reported an unknown measurement '" + m.name + "'");
    if (m.skipped) {
      c.skipped[*r] = m.reason;
      continue;
    }
    if (m.unit != roof_info(*r).unit)
      return internal_error("probe measurement '" + m.name + "' is in " + m.unit + ", expected " +
                            std::string(roof_info(*r).unit));
    if (!(m.value > 0) || !std::isfinite(m.value) || !(m.median_ms > 0))
      return internal_error("probe measurement '" + m.name + "' is not a positive number");
    Ceiling x;
    x.value = m.value;
    x.source = CeilingSource::kMeasured;
    x.note = quick ? m.note + " (quick mode: small sizes)" : m.note;
    x.median_ms = m.median_ms;
    x.min_ms = m.min_ms;
    x.max_ms = m.max_ms;
    x.reps = m.reps;
    c.roofs[*r] = x;
  }
  if (!c.dram_roof()) c.warnings.push_back("the probe measured no DRAM bandwidth");
  return c;
}

}  // namespace kopt::roofline
