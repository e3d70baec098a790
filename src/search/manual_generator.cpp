#include "search/manual_generator.h"

#include <fmt/format.h>

#include <chrono>
#include <optional>
#include <thread>

#include "search/external_generator.h"
#include "util/fs.h"
#include "util/process.h"

namespace kopt::search {

namespace fs = std::filesystem;

ManualGenerator::ManualGenerator(ManualOptions opts, std::function<void(const std::string&)> say)
    : opts_(std::move(opts)), say_(std::move(say)) {
  if (!say_) say_ = [](const std::string& s) { std::fprintf(stderr, "%s\n", s.c_str()); };
}

Result<GeneratorOutput> ManualGenerator::generate(const GeneratorInput& in) {
  KOPT_TRY_ASSIGN(BriefFiles b, write_brief_files(in, opts_.manifest_name, opts_.require_guards));
  const fs::path manifest_path = b.dir / opts_.manifest_name;
  std::error_code ec;
  fs::remove(manifest_path, ec);  // never read a stale manifest
  say_(fmt::format("kopt: iteration {} waits for you. Read the brief:\n  {}\n"
                   "write up to {} candidate file(s) in {} and, last, {}\n  {}\n"
                   "(the format is in the brief's rules; {}; Ctrl-C stops, and kopt optimize --resume continues)",
                   in.iteration, (b.dir / "brief.md").string(), in.k, b.dir.string(), opts_.manifest_name,
                   manifest_path.string(),
                   opts_.timeout_s > 0 ? fmt::format("kopt waits {:g} s", opts_.timeout_s) : std::string("kopt waits without a limit")));

  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  auto elapsed_s = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  const auto poll = std::chrono::duration<double>(std::max(0.01, opts_.poll_s));
  // The manifest may be seen half-written (a writer that does not rename it into place): it is read again
  // until it parses, for up to 5 s after it first appeared. One that is invalid is moved aside with the reason
  // said, and kopt waits for a corrected one.
  const fs::path rejected_path = b.dir / ("rejected_" + opts_.manifest_name);
  std::optional<double> seen_at;
  std::string last_rejection;
  auto reject = [&](const std::string& why) {
    last_rejection = why;
    fs::rename(manifest_path, rejected_path, ec);
    say_(fmt::format("kopt: {} rejected (moved to {}): {}\nkopt: fix it and write {} again", manifest_path.string(),
                     rejected_path.filename().string(), why, opts_.manifest_name));
    seen_at.reset();
  };
  while (true) {
    if (util::interrupted()) return Error{ExitCode::kInterrupted, "interrupted while waiting for " + manifest_path.string()};
    if (fs::exists(manifest_path, ec)) {
      if (!seen_at) seen_at = elapsed_s();
      auto manifest = util::read_json(manifest_path);
      if (manifest) {
        auto read = read_manifest(manifest.value(), b.manifest);
        if (read) {
          say_(fmt::format("kopt: read {} after {:.0f} s", manifest_path.string(), elapsed_s()));
          return accept_candidates(in, std::move(read).value(), std::move(b.selection));
        }
        reject(read.error().message);
      } else if (elapsed_s() - *seen_at > 5) {
        reject(manifest.error().message);
      }
    }
    if (opts_.timeout_s > 0 && elapsed_s() > opts_.timeout_s)
      return input_error(fmt::format("no valid {} in {} after {:g} s (--manual-timeout-s){}; the brief is {}. The run is "
                                     "resumable: kopt optimize --resume RUN_DIR",
                                     opts_.manifest_name, b.dir.string(), opts_.timeout_s,
                                     last_rejection.empty() ? "" : "; the last one was rejected: " + last_rejection,
                                     (b.dir / "brief.md").string()));
    std::this_thread::sleep_for(poll);
  }
}

}  // namespace kopt::search
