#pragma once
// The host threads of this process (/proc/self/task), for the rule that solve()'s outputs are final when it returns
// (docs/RUNNER.md "Outputs final when solve() returns", issue 40): a solve() that returns at once and leaves a
// thread to launch the real work later would be checked before that work and timed without it. A thread that
// appeared during a call (or while its library was loaded) and is still alive after the device was synchronised
// and a short settle delay is a rejection (threads_left_running).
#include <set>
#include <string>
#include <vector>

namespace kopt::runner {

// The thread ids alive now; empty where /proc/self/task cannot be read (then nothing is ever found new).
std::set<long> live_threads();

// Ids in `now` that are not in `before`, ascending.
std::vector<long> started_since(const std::set<long>& before, const std::set<long>& now);

// Of `tids`, those still alive after waiting up to `settle_ms` for them to end (threads that end on their own, e.g.
// a runtime's short-lived helper, are not counted).
std::vector<long> still_running(const std::vector<long>& tids, double settle_ms);

// "3 thread(s): 12345 (name), ..." from /proc/self/task/TID/comm.
std::string describe_threads(const std::vector<long>& tids);

// How long a call's new threads are given to end before they count, in ms.
inline constexpr double kThreadSettleMs = 20;

}  // namespace kopt::runner
