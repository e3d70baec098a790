#include "contract/ephemeral_seed.h"

#include <sys/stat.h>

#include <atomic>

#include "util/memfd.h"

namespace kopt::contract {

namespace {
// EphemeralSeeds alive in this process, and whether it was dumpable before the first.
std::atomic<int> g_held{0};
std::atomic<bool> g_was_dumpable{true};
}  // namespace

Result<std::shared_ptr<const EphemeralSeed>> EphemeralSeed::adopt(util::Fd fd, util::Json about) {
  // Not dumpable from now on: no process of the user can open this descriptor through /proc/<kopt>/fd.
  if (g_held++ == 0) g_was_dumpable = util::set_dumpable(false);
  std::shared_ptr<const EphemeralSeed> seed(new EphemeralSeed(std::move(fd), 0, std::move(about)));
  KOPT_TRY_ASSIGN(const int seals, util::seals_of(seed->fd()));
  if ((seals & util::kFrozenSeals) != util::kFrozenSeals)
    return input_error("the ephemeral seed's memfd is not sealed for good (seals " + std::to_string(seals) + ")");
  struct stat sb {};
  if (::fstat(seed->fd(), &sb) != 0 || sb.st_size <= 0) return input_error("the ephemeral seed's memfd is empty");
  const_cast<EphemeralSeed&>(*seed).bytes_ = static_cast<uint64_t>(sb.st_size);
  return seed;
}

EphemeralSeed::~EphemeralSeed() {
  fd_.reset();
  if (--g_held == 0 && g_was_dumpable) util::set_dumpable(true);
}

util::Json EphemeralSeed::to_json() const {
  return {{"bytes", bytes_},
          {"made_s", about_.value("elapsed_s", 0.0)},
          {"backend", about_.value("backend", std::string())},
          {"device", about_.value("device", std::string())},
          {"in_memory_only", true}};
}

Result<std::vector<std::string>> ephemeral_args(GoldenRequest req, int socket_fd) {
  req.time_reference = false;
  req.cache.reset();
  KOPT_TRY_ASSIGN(auto argv, ready_golden_request(req));
  std::vector<std::string> args;
  for (size_t i = 4; i < argv.size(); ++i) {
    if (argv[i] == "--sealed-dir") {  // no sealed folder: nothing goes to disk
      ++i;
      continue;
    }
    args.push_back(argv[i]);
  }
  args.insert(args.end(), {"--ephemeral-socket", std::to_string(socket_fd)});
  return args;
}

}  // namespace kopt::contract
