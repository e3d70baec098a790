#include "contract/golden_maker.h"

#include <algorithm>

#include "contract/sealed_seed.h"
#include "toolchain/tools.h"
#include "util/fs.h"
#include "util/hash.h"
#include "util/strings.h"

namespace kopt::contract {

std::vector<std::string> harness_argv(const GoldenRequest& req, const std::string& python) {
  util::Json dims = util::Json::object();
  for (const auto& [k, v] : req.dims) dims[k] = v;
  std::vector<std::string> argv = {python, "-m", "kopt_harness", "golden",
                                   "--ref", std::filesystem::absolute(req.ref_py).string()};
  if (req.triton_kernel.empty()) {
    argv.insert(argv.end(), {"--signature", (req.out_dir / "signature.json").string()});
  } else {
    argv.insert(argv.end(), {"--triton-kernel", std::filesystem::absolute(req.triton_kernel).string()});
  }
  argv.insert(argv.end(), {"--dims", dims.dump(), "--seeds", std::to_string(req.seeds), "--out", req.out_dir.string()});
  if (req.ptr_size > 0 && req.triton_kernel.empty()) {
    argv.push_back("--ptr-size");
    argv.push_back(std::to_string(req.ptr_size));
  }
  if (req.time_reference) argv.push_back("--time-reference");
  if (!req.sealed_token.empty()) argv.insert(argv.end(), {"--sealed-dir", (sealed_root() / req.sealed_token).string()});
  return argv;
}

Result<util::ProcessSpec> harness_process(const std::vector<std::string>& args, double timeout_s) {
  std::string python = toolchain::find_python();
  if (python.empty()) return gate_error("python3 not found; the golden-data harness needs it (or set KOPT_PYTHON)");
  std::string harness = toolchain::python_harness_dir();
  if (harness.empty()) return internal_error("kopt's Python harness (python/kopt_harness) was not found next to kopt");
  util::ProcessSpec spec{{python, "-m", "kopt_harness"}};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.env["PYTHONPATH"] = harness + (std::getenv("PYTHONPATH") ? std::string(":") + std::getenv("PYTHONPATH") : "");
  spec.env["PYTHONUNBUFFERED"] = "1";
  spec.timeout_s = timeout_s;
  return spec;
}

namespace {

// Name and content of each *.py file directly in dir, sorted by name.
Status add_python_files(util::Hasher& h, const std::filesystem::path& dir, const std::filesystem::path& skip) {
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (it->path().extension() == ".py" && it->is_regular_file(ec) && it->path() != skip) files.push_back(it->path());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    KOPT_TRY_ASSIGN(auto text, util::read_file(f));
    h.add(f.filename().string()).add(text);
  }
  return ok_status();
}

}  // namespace

Result<std::string> golden_key(const std::vector<std::string>& argv) {
  namespace fs = std::filesystem;
  util::Hasher h;
  h.add("kopt-golden-1").add(toolchain::find_python());
  const std::string harness = toolchain::python_harness_dir();
  if (!harness.empty()) KOPT_TRY(add_python_files(h, fs::path(harness) / "kopt_harness", {}));
  if (const char* d = std::getenv("KOPT_TRITON_DEVICE")) h.add("KOPT_TRITON_DEVICE").add(d);
  for (size_t i = 3; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (a == "--sealed-dir") {  // a fresh random folder each time: where the sealed seed goes is not what it is
      ++i;
      continue;
    }
    h.add(a);
    if (i + 1 >= argv.size()) break;
    if (a == "--out") {
      ++i;  // where the files go is not what they are
    } else if (a == "--signature") {
      KOPT_TRY_ASSIGN(auto sig, util::read_json(argv[++i]));
      if (sig.is_object()) sig.erase("meta");  // when it was written is not what it says
      // Nor where solve() stands in its file: a derived space's instrumented copy moves it, the data is the same.
      if (sig.is_object() && sig.contains("signature") && sig["signature"].is_object()) sig["signature"].erase("line");
      h.add(sig.dump());
    } else if (a == "--ref" || a == "--triton-kernel") {
      const fs::path f = argv[++i];
      KOPT_TRY_ASSIGN(auto text, util::read_file(f));
      h.add(fs::absolute(f).lexically_normal().string()).add(text);
      if (a == "--ref") KOPT_TRY(add_python_files(h, fs::absolute(f).parent_path(), fs::absolute(f)));
    }
  }
  return h.hex();
}

std::optional<std::string> golden_cache_hit(const util::Json& manifest) {
  if (!manifest.is_object() || !manifest.contains("golden_cache") || !manifest["golden_cache"].value("hit", false)) return std::nullopt;
  return manifest["golden_cache"].value("made", std::string("?"));
}

std::string golden_identity(const util::Json& manifest) {
  if (!manifest.is_object()) return "";
  util::Hasher h;
  h.add("kopt-golden-identity-1");
  if (manifest.contains("files") && manifest["files"].is_array() && !manifest["files"].empty()) {
    h.add(manifest["files"].dump()).add(manifest.value("dims", util::Json::object()).dump());
    h.add(manifest.value("buffers", util::Json::array()).dump());
    return h.hex();
  }
  if (manifest.contains("golden_cache") && manifest["golden_cache"].is_object())
    if (auto key = manifest["golden_cache"].value("key", std::string()); !key.empty()) return h.add(key).hex();
  return "";
}

bool golden_entry_usable(const CacheHit& hit) {
  auto m = util::read_json(hit.entry / "manifest.json");
  return m && sealed_seed_present(*m);
}

Result<std::vector<std::string>> ready_golden_request(GoldenRequest& req) {
  if (req.sealed_token.empty()) req.sealed_token = new_sealed_token();
  std::error_code ec;
  if (!std::filesystem::is_regular_file(req.ref_py, ec))
    return input_error("reference file " + req.ref_py.string() + " not found (give it with --ref ref.py)");
  std::filesystem::create_directories(req.out_dir, ec);
  if (req.triton_kernel.empty())  // a Triton kernel's harness writes signature.json from setup()
    KOPT_TRY(util::write_json_atomic(req.out_dir / "signature.json", "signature", {{"signature", to_json(req.signature)}}));
  return harness_argv(req, "python3");
}

namespace {

// The harness's output in req.out_dir, checked for its sealed seed, stored in the cache under `key` (when there is
// one): the manifest, with "golden_cache" saying what was stored.
Result<util::Json> adopt_made(const GoldenRequest& req, const std::string& key) {
  prune_sealed(sealed_root());
  KOPT_TRY_ASSIGN(auto manifest, util::read_json(req.out_dir / "manifest.json"));
  if (!sealed_seed_present(manifest))
    return internal_error("the golden-data harness wrote no sealed seed to " + (sealed_root() / req.sealed_token).string());
  if (req.cache && !key.empty() && manifest.is_object()) {
    util::Json about = {{"ref", std::filesystem::absolute(req.ref_py).string()}, {"seeds", req.seeds}};
    util::Json dims = util::Json::object();
    for (const auto& [k, v] : req.dims) dims[k] = v;
    about["dims"] = dims;
    auto stored = store_golden(*req.cache, key, req.out_dir, about);
    manifest["golden_cache"] = {{"hit", false}, {"key", key}, {"stored", stored && *stored}};
    if (!stored) manifest["golden_cache"]["error"] = stored.error().message;
  }
  return manifest;
}

}  // namespace

GoldenBatch golden_batch(std::vector<GoldenRequest> requests) {
  GoldenBatch b;
  for (auto& req : requests) {
    if (!req.cache) continue;
    auto argv = ready_golden_request(req);
    if (!argv) continue;  // make_golden says why, when it is asked for this one
    auto key = golden_key(*argv);
    if (!key) continue;
    if (auto hit = find_golden(*req.cache, *key); hit && golden_entry_usable(*hit)) continue;
    if (std::find(b.keys.begin(), b.keys.end(), *key) != b.keys.end()) continue;  // made once, placed for each
    b.args.emplace_back(argv->begin() + 4, argv->end());  // after `python3 -m kopt_harness golden`
    b.keys.push_back(*key);
    b.timeout_s += req.timeout_s;
    b.todo.push_back(req);
  }
  return b;
}

bool adopt_batch_line(const GoldenBatch& batch, size_t i, const std::string& line) {
  auto summary = util::Json::parse(line, nullptr, false);
  return summary.is_object() && summary.value("status", std::string()) == "ok" && adopt_made(batch.todo[i], batch.keys[i]);
}

Result<int> prefetch_golden(std::vector<GoldenRequest> requests, util::CommandRunner& runner) {
  GoldenBatch b = golden_batch(std::move(requests));
  if (b.todo.empty()) return 0;
  const std::filesystem::path file = b.todo.front().out_dir.parent_path() / ("golden_batch_" + new_sealed_token() + ".json");
  KOPT_TRY(util::write_file_atomic(file, util::Json(b.args).dump()));
  KOPT_TRY_ASSIGN(util::ProcessSpec spec, harness_process({"golden-batch", "--requests", file.string()}, b.timeout_s));
  auto r = runner.run(spec);
  std::error_code ec;
  std::filesystem::remove(file, ec);
  // One summary line per request, in order; a request that failed (or was not reached) is made again, alone, by
  // make_golden, which reports its error.
  const auto lines = util::split(r.stdout_text, '\n');
  int made = 0;
  for (size_t i = 0, line = 0; i < b.todo.size(); ++i) {
    while (line < lines.size() && util::trim(lines[line]).empty()) ++line;
    if (line >= lines.size()) break;
    if (adopt_batch_line(b, i, lines[line++])) ++made;
  }
  return made;
}

Result<util::Json> make_golden(const GoldenRequest& request, util::CommandRunner& runner) {
  GoldenRequest req = request;
  KOPT_TRY_ASSIGN(auto argv, ready_golden_request(req));
  std::string key;
  if (req.cache) {
    if (auto k = golden_key(argv); k) key = *k;  // a file that cannot be read: no cache, the harness says why
    if (!key.empty())
      if (auto hit = find_golden(*req.cache, key); hit && golden_entry_usable(*hit))
        if (place_golden(*hit, req.out_dir))
          if (auto m = util::read_json(req.out_dir / "manifest.json"); m && m->is_object()) {
            (*m)["golden_cache"] = {{"hit", true}, {"key", key}, {"made", hit->record.value("made", "")}, {"entry", hit->entry.string()}};
            return m;
          }
  }
  KOPT_TRY_ASSIGN(util::ProcessSpec spec, harness_process({argv.begin() + 3, argv.end()}, req.timeout_s));
  auto r = runner.run(spec);
  if (r.timed_out) return input_error("ref.py took longer than " + std::to_string(static_cast<int>(req.timeout_s)) + " s to make golden data");
  if (!r.success()) {
    std::string err = util::trim(r.stderr_text);
    if (const std::string dim = "kopt_harness: dimension error: "; r.exit_code == 4 && util::starts_with(err, dim))
      return input_error(err.substr(dim.size()));
    if (r.exit_code == 4)
      return input_error("ref.py failed while making golden data:\n" + err);
    return internal_error("the golden-data harness failed (" + r.describe() + "):\n" + err);
  }
  return adopt_made(req, key);
}

}  // namespace kopt::contract
