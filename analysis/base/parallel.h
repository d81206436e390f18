// Runs independent jobs (one per trace, for the commands that take several) on up to
// std::thread::hardware_concurrency() threads; results come back in the jobs' order, so
// what a command prints does not depend on which job finished first.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <optional>
#include <thread>
#include <type_traits>
#include <vector>

namespace cumemtrace {

// job(i) for i in [0, n); one job runs on the calling thread alone. A job's exception is
// rethrown here (the first job's in index order), after every thread has ended.
template <class Job>
auto parallel_map(size_t n, Job job) -> std::vector<std::invoke_result_t<Job&, size_t>> {
  using Result = std::invoke_result_t<Job&, size_t>;
  std::vector<std::optional<Result>> done(n);
  std::vector<std::exception_ptr> failed(n);
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1)) < n;) {
      try {
        done[i].emplace(job(i));
      } catch (...) { failed[i] = std::current_exception(); }
    }
  };
  const size_t threads = std::min<size_t>(n, std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  std::vector<Result> out;
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    if (failed[i]) std::rethrow_exception(failed[i]);
    out.push_back(std::move(*done[i]));
  }
  return out;
}

}  // namespace cumemtrace
