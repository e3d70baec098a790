#include "dispatch/gpus.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "util/strings.h"

namespace kopt::dispatch {

namespace {
std::optional<int> ordinal(const std::string& s) {
  if (s.empty() || s.size() > 4 || !std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return std::nullopt;
  return std::stoi(s);
}
}  // namespace

std::string GpuSelection::text() const {
  switch (kind) {
    case Kind::kDefault: return "";
    case Kind::kAll: return "all";
    case Kind::kCount: return std::to_string(count);
    case Kind::kList: {
      std::string t;
      for (int i : list) {
        if (!t.empty()) t += ',';
        t += std::to_string(i);
      }
      return t;
    }
  }
  return "";
}

Result<GpuSelection> parse_gpus(const std::string& text, bool ray) {
  GpuSelection s;
  const std::string t = util::trim(text);
  if (t.empty()) return s;
  if (t == "all") {
    s.kind = GpuSelection::Kind::kAll;
    return s;
  }
  if (ray) {
    auto n = ordinal(t);
    if (!n || *n < 1)
      return input_error(fmt::format("--gpus with --ray takes the number of GPU slots to use, not '{}'", text));
    s.kind = GpuSelection::Kind::kCount;
    s.count = *n;
    return s;
  }
  s.kind = GpuSelection::Kind::kList;
  std::set<int> seen;
  for (const auto& part : util::split(t, ',')) {
    auto n = ordinal(util::trim(part));
    if (!n) return input_error(fmt::format("--gpus takes all or a list of GPU ordinals such as 0,1,3, not '{}' ('{}' is no ordinal)", text, part));
    if (!seen.insert(*n).second) return input_error(fmt::format("--gpus names GPU {} twice ('{}')", *n, text));
    s.list.push_back(*n);
  }
  return s;
}

Result<std::vector<Slot>> resolve_gpus(const GpuSelection& sel, const std::vector<device::GpuInfo>& gpus) {
  if (gpus.empty()) return gate_error("no GPU to measure on");
  std::vector<device::GpuInfo> chosen;
  switch (sel.kind) {
    case GpuSelection::Kind::kDefault: chosen = {gpus.front()}; break;
    case GpuSelection::Kind::kAll: chosen = gpus; break;
    case GpuSelection::Kind::kCount:
      return input_error("--gpus N counts a Ray cluster's slots: give --ray ADDRESS too, or --gpus all|LIST for this host's GPUs");
    case GpuSelection::Kind::kList:
      for (int i : sel.list) {
        auto it = std::find_if(gpus.begin(), gpus.end(), [&](const device::GpuInfo& g) { return g.index == i; });
        if (it == gpus.end()) {
          std::string have;
          for (const auto& g : gpus) {
            if (!have.empty()) have += ", ";
            have += std::to_string(g.index);
          }
          return input_error(fmt::format("--gpus {}: this host has no GPU {} (it has {}; `kopt doctor` lists them)", sel.text(), i, have));
        }
        chosen.push_back(*it);
      }
      break;
  }
  for (const auto& g : chosen)
    if (g.name != chosen.front().name || g.cc_major != chosen.front().cc_major || g.cc_minor != chosen.front().cc_minor)
      return input_error(fmt::format("--gpus {}: GPU {} is a {} and GPU {} a {}; timings and ceilings of different models are "
                                     "not comparable: select GPUs of one model with --gpus LIST",
                                     sel.text().empty() ? "all" : sel.text(), chosen.front().index, chosen.front().name, g.index, g.name));
  std::vector<Slot> slots;
  // Today's path, exactly: one GPU, the first the driver lists: the worker keeps kopt's environment.
  const bool plain = chosen.size() == 1 && chosen.front().index == gpus.front().index;
  for (const auto& g : chosen)
    slots.push_back({g, plain ? "" : (g.uuid.empty() ? std::to_string(g.index) : g.uuid), fmt::format("GPU {} ({})", g.index, g.name)});
  return slots;
}

}  // namespace kopt::dispatch
