#pragma once
// Measuring on several GPUs (issue 21, docs/MULTI_GPU.md): a fixed set of slots (one measuring worker each, a GPU
// of this host or a Ray actor holding one), jobs handed to whichever slot is free, each job run whole on one slot.
// A job is a candidate's whole evaluation (its race against the champion at every case), so a paired comparison
// never spans two GPUs. A job whose slot lost its worker (a GPU fault, a lost node, a worker that died) is retried
// once on another slot, then reported; a job pinned to a slot runs only there. With one slot nothing runs on a
// thread of its own: the work is called on the caller's thread, in the order the jobs come (today's path).
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace kopt::dispatch {

// What one attempt of a job came to.
enum class Attempt {
  kDone,        // a verdict (correct or not): the job is finished
  kWorkerLost,  // the slot's worker died under it: no verdict; retried on another slot once
  kStop,        // the run is stopping (Ctrl-C, the time budget): no verdict, and no further job is started
};

struct JobRecord {
  std::vector<int> slots;  // the slots it ran on, in order (one, or two when retried)
  bool lost = false;       // its last attempt lost its worker too: reported as that, without a retry left
  bool stopped = false;    // an attempt answered kStop
  bool ran() const { return !slots.empty(); }
};

struct SlotRecord {
  int jobs = 0;         // attempts it ran
  int lost = 0;         // attempts that lost its worker
  double busy_s = 0;    // wall time inside the work
};

struct Options {
  int slots = 1;
  int max_attempts = 2;  // a lost job runs at most this many times, each on a slot it has not run on
};

class Dispatcher {
 public:
  // `next`: the next job to start, blocking until one is ready; nullopt when there are no more (called by one
  // slot at a time). `pin`: the slot a job must run on (nullopt: any). `work`: one attempt of `job` on `slot`
  // (`attempt` counts from 0), called concurrently on different slots for different jobs.
  using Next = std::function<std::optional<size_t>()>;
  using Pin = std::function<std::optional<int>(size_t job)>;
  using Work = std::function<Attempt(size_t job, int slot, int attempt)>;

  explicit Dispatcher(Options o);
  // Runs every job `next` yields to its end (or until an attempt answers kStop); returns when all have finished.
  void run(const Next& next, const Work& work, const Pin& pin = {});

  const std::vector<SlotRecord>& slots() const { return slots_; }
  // Per job, in the order `next` yielded them (index: the job's value as `next` gave it).
  const std::vector<std::pair<size_t, JobRecord>>& jobs() const { return jobs_; }
  double wall_s() const { return wall_s_; }  // of run()

 private:
  Options o_;
  std::vector<SlotRecord> slots_;
  std::vector<std::pair<size_t, JobRecord>> jobs_;
  double wall_s_ = 0;
};

// The slot whose work this thread is doing (inside a Work call), -1 elsewhere: what a measuring request made
// there is served by.
int current_slot();

// The per-slot figures of a run, for the summary: jobs, lost, busy seconds and utilisation (busy / wall).
std::string utilisation_text(const Dispatcher& d, const std::vector<std::string>& slot_names);

}  // namespace kopt::dispatch
