#pragma once
// Items handed to threads in turn: each thread takes the next item not yet taken as it finishes
// one, so a thread that runs slower (a virtual CPU the host lends elsewhere) does fewer items
// instead of keeping the others waiting at the end. The pieces of a large log, the parts of an
// analysis pass and the input files are shared among threads this way.
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <future>
#include <vector>

namespace mfu::detail {

/// Calls f(i) for every i of [0, items), on the calling thread and up to `threads` - 1 threads of
/// their own, each taking the next i not yet taken, and waits for all. What f(i) computes must
/// not depend on the thread that runs it. An exception of an item is rethrown after all threads
/// have stopped, the first in item order, so none outlives what it reads. With `stop_on_error`
/// no item is started after one has failed: the items are taken in order, so every item before
/// the failed one was started, and the error rethrown is the one a serial loop would meet first.
template <class F>
void run_in_turn(std::size_t items, unsigned threads, F&& f, bool stop_on_error = false) {
  if (items == 0) return;
  std::vector<std::exception_ptr> failed(items);
  std::atomic<std::size_t> next{0};
  std::atomic<bool> stop{false};
  const auto work = [&] {
    for (std::size_t i = next++; i < items && !stop; i = next++) {
      try {
        f(i);
      } catch (...) {
        failed[i] = std::current_exception();
        if (stop_on_error) stop = true;
      }
    }
  };
  const std::size_t helpers = std::min<std::size_t>(std::max(1u, threads), items) - 1;
  std::vector<std::future<void>> others;
  others.reserve(helpers);
  for (std::size_t t = 0; t < helpers; ++t) others.push_back(std::async(std::launch::async, work));
  work();
  for (auto& o : others) o.get();  // work() catches what its items throw
  for (const std::exception_ptr& e : failed)
    if (e) std::rethrow_exception(e);
}

}  // namespace mfu::detail
