#pragma once
// for_each_index(n, jobs, fn): fn(i) for every i in [0, n), at most `jobs` at once: jobs - 1 threads of its own and
// the caller's; each takes the next index as it finishes one. fn must be safe to call from several threads. The pool
// of the compile batch (compile/pool.cpp) and of the Triton compile children (loop/triton_precompile.cpp).
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <thread>
#include <vector>

namespace kopt::util {

template <class Fn>
void for_each_index(size_t n, size_t jobs, Fn&& fn) {
  if (n == 0) return;
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i = next++; i < n; i = next++) fn(i);
  };
  std::vector<std::thread> threads;
  for (size_t t = 1; t < std::clamp<size_t>(jobs, 1, n); ++t) threads.emplace_back(worker);
  worker();
  for (auto& t : threads) t.join();
}

}  // namespace kopt::util
