#include "dispatch/dispatcher.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <thread>

namespace kopt::dispatch {

namespace {
using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

thread_local int tls_slot = -1;
struct SlotScope {  // the calling thread works for `slot` until the scope ends
  int saved;
  explicit SlotScope(int slot) : saved(tls_slot) { tls_slot = slot; }
  ~SlotScope() { tls_slot = saved; }
};

struct Pending {
  size_t job;
  std::optional<int> pin;
  std::vector<int> tried;
  bool runs_on(int slot) const {
    return (!pin || *pin == slot) && std::find(tried.begin(), tried.end(), slot) == tried.end();
  }
};
}  // namespace

Dispatcher::Dispatcher(Options o) : o_(o) {
  o_.slots = std::max(1, o_.slots);
  o_.max_attempts = std::max(1, o_.max_attempts);
  slots_.resize(static_cast<size_t>(o_.slots));
}

void Dispatcher::run(const Next& next, const Work& work, const Pin& pin) {
  const auto t0 = Clock::now();
  std::mutex mu;
  std::condition_variable cv;
  std::deque<Pending> pending;        // yielded but not started: pinned elsewhere, or lost and waiting for a retry
  std::map<size_t, size_t> position;  // job -> index in jobs_
  bool exhausted = false, feeding = false, stopping = false;
  int in_flight = 0;

  // Whether `p` may run again after losing its worker on `slot`: attempts left and a slot it may still use.
  auto retryable = [&](const Pending& p) {
    if (static_cast<int>(p.tried.size()) >= o_.max_attempts) return false;
    for (int s = 0; s < o_.slots; ++s)
      if (p.runs_on(s)) return true;
    return false;
  };
  auto slot_loop = [&](int slot) {
    std::unique_lock<std::mutex> lock(mu);
    while (true) {
      if (stopping) return;
      auto it = std::find_if(pending.begin(), pending.end(), [&](const Pending& p) { return p.runs_on(slot); });
      std::optional<Pending> mine;
      if (it != pending.end()) {
        mine = *it;
        pending.erase(it);
      } else if (!exhausted && !feeding) {
        feeding = true;  // one slot at a time asks for the next job; the others wait
        lock.unlock();
        auto j = next();
        lock.lock();
        feeding = false;
        cv.notify_all();
        if (!j) {
          exhausted = true;
          continue;
        }
        position[*j] = jobs_.size();
        jobs_.push_back({*j, JobRecord{}});
        Pending p{*j, pin ? pin(*j) : std::nullopt, {}};
        if (p.pin && (*p.pin < 0 || *p.pin >= o_.slots)) p.pin.reset();  // a pin to no slot of this run: any
        if (!p.runs_on(slot)) {
          pending.push_back(std::move(p));
          continue;
        }
        mine = std::move(p);
      } else {
        // Nothing for this slot now: done when nothing more can come (no job left to yield, none running that
        // could be lost and retried here, none pending that this slot may take).
        if (exhausted && in_flight == 0 && !feeding) {
          cv.notify_all();
          return;
        }
        cv.wait(lock);
        continue;
      }
      ++in_flight;
      const int attempt = static_cast<int>(mine->tried.size());
      mine->tried.push_back(slot);
      lock.unlock();
      const auto w0 = Clock::now();
      Attempt a;
      {
        SlotScope scope(slot);
        a = work(mine->job, slot, attempt);
      }
      const double busy = since(w0);
      lock.lock();
      --in_flight;
      auto& rec = jobs_[position[mine->job]].second;
      rec.slots.push_back(slot);
      auto& sr = slots_[static_cast<size_t>(slot)];
      ++sr.jobs;
      sr.busy_s += busy;
      if (a == Attempt::kStop) {
        rec.stopped = true;
        stopping = true;
      } else if (a == Attempt::kWorkerLost) {
        ++sr.lost;
        if (retryable(*mine)) pending.push_back(std::move(*mine));
        else rec.lost = true;
      }
      cv.notify_all();
    }
  };
  if (o_.slots == 1) {
    slot_loop(0);  // on the caller's thread: exactly the sequential path
  } else {
    std::vector<std::thread> threads;
    for (int s = 0; s < o_.slots; ++s) threads.emplace_back(slot_loop, s);
    for (auto& t : threads) t.join();
  }
  // Jobs yielded but never finished (the run stopped first) keep an empty record: not run.
  wall_s_ = since(t0);
}

int current_slot() { return tls_slot; }

std::string utilisation_text(const Dispatcher& d, const std::vector<std::string>& slot_names) {
  std::string out;
  for (size_t s = 0; s < d.slots().size(); ++s) {
    const auto& r = d.slots()[s];
    const std::string name = s < slot_names.size() ? slot_names[s] : fmt::format("slot {}", s);
    out += fmt::format("{}{}: {} run(s), {} lost, busy {:.1f} s of {:.1f} s ({:.0f}%)", out.empty() ? "" : "; ", name, r.jobs,
                       r.lost, r.busy_s, d.wall_s(), d.wall_s() > 0 ? 100.0 * r.busy_s / d.wall_s() : 0.0);
  }
  return out;
}

}  // namespace kopt::dispatch
