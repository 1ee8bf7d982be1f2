// SPDX-License-Identifier: Apache-2.0
// File: FiberPool (fibers.h): stacks, the workers' loop, parking and stealing.
//
// Ownership: every fiber is held by one worker at a time, in that worker's list, under that
// worker's mutex. A fiber is `running` while a worker executes it; only a fiber that is not
// running may be resumed, by its holder or by a worker that moves it into its own list (a
// steal). The fields a fiber writes before it parks (what it waits for) are read by others
// only under the holder's mutex after the holder has marked it not running, which it does
// under that mutex once the fiber switched back: that mutex orders them.
#include "optcoll/exec/threads/fibers.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <semaphore>
#include <thread>
#include <vector>

#include <boost/context/detail/fcontext.hpp>
#include <fmt/format.h>

#include "optcoll/exec/threads/thread_transport.h"
#include "optcoll/model/error.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define OPTCOLL_FIBERS_ASAN 1
#endif
#if __has_feature(thread_sanitizer)
#define OPTCOLL_FIBERS_TSAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define OPTCOLL_FIBERS_ASAN 1
#endif
#if defined(__SANITIZE_THREAD__)
#define OPTCOLL_FIBERS_TSAN 1
#endif

#if defined(OPTCOLL_FIBERS_ASAN)
#include <sanitizer/asan_interface.h>
#endif
#if defined(OPTCOLL_FIBERS_TSAN)
#include <sanitizer/tsan_interface.h>
#endif

namespace optcoll::threads {
namespace {

namespace fc = boost::context::detail;
using Clock = FiberPool::Clock;

// A stack mapped once, below a guard page, and lent to each run's fiber of its rank.
class Stack {
 public:
  explicit Stack(std::size_t bytes) : page_(static_cast<std::size_t>(sysconf(_SC_PAGESIZE))) {
    // (Beyond any address space, and the rounding below must not wrap.)
    void* base = MAP_FAILED;
    if (bytes <= (std::size_t{1} << 50)) {
      bytes_ = (bytes + page_ - 1) / page_ * page_;
      base = mmap(nullptr, bytes_ + page_, PROT_READ | PROT_WRITE,
                  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    }
    if (base == MAP_FAILED) {
      throw TransportError(fmt::format("cannot map a fiber stack of {} bytes", bytes));
    }
    base_ = static_cast<std::byte*>(base);
    mprotect(base_, page_, PROT_NONE);  // the guard page: an overflow faults, not corrupts
  }
  ~Stack() { munmap(base_, bytes_ + page_); }
  Stack(const Stack&) = delete;
  Stack& operator=(const Stack&) = delete;

  std::byte* bottom() const { return base_ + page_; }        // lowest usable address
  std::byte* top() const { return base_ + page_ + bytes_; }  // stacks grow down from here
  std::size_t size() const { return bytes_; }

 private:
  std::size_t page_;
  std::size_t bytes_ = 0;
  std::byte* base_ = nullptr;
};

}  // namespace

struct FiberPool::Impl {
  struct Fiber {
    explicit Fiber(std::size_t stack_bytes) : stack(stack_bytes) {}
    Impl* pool = nullptr;
    Rank rank = 0;
    Stack stack;
    fc::fcontext_t context = nullptr;  // suspended: where the fiber goes on
    fc::fcontext_t back = nullptr;     // while it runs: the worker loop to switch back to
    int worker = 0;                    // the worker running it (set before each resume)
    bool running = false;
    bool done = false;
    // What a parked fiber waits for: news different from `seen`, or the deadline.
    bool parked = false;
    const std::atomic<std::uint32_t>* news = nullptr;
    std::uint32_t seen = 0;
    Clock::time_point deadline;
#if defined(OPTCOLL_FIBERS_TSAN)
    void* tsan = nullptr;
#endif
#if defined(OPTCOLL_FIBERS_ASAN)
    void* fake_stack = nullptr;  // the fiber's, saved while it is switched out
#endif
  };

  struct alignas(64) Worker {
    std::mutex mutex;        // guards `held`, `next` and the fibers' running flags
    std::vector<Rank> held;  // the fibers this worker holds (not done)
    std::size_t next = 0;    // where the next scan starts (round robin)
    std::condition_variable wake;
    std::atomic<bool> sleeping{false};
    std::uint32_t pokes = 0;  // under mutex
#if defined(OPTCOLL_FIBERS_TSAN)
    void* tsan = nullptr;  // the worker thread's own fiber
#endif
#if defined(OPTCOLL_FIBERS_ASAN)
    const void* stack_bottom = nullptr;  // the worker thread's stack
    std::size_t stack_size = 0;
    void* fake_stack = nullptr;
#endif
  };

  Impl(Rank nranks, int nworkers, std::size_t stack_bytes)
      : workers(static_cast<std::size_t>(nworkers)) {
    fibers.reserve(static_cast<std::size_t>(nranks));
    for (Rank r = 0; r < nranks; ++r) {
      fibers.push_back(std::make_unique<Fiber>(stack_bytes));
      fibers.back()->pool = this;
      fibers.back()->rank = r;
    }
    go.reserve(static_cast<std::size_t>(nworkers));
    for (int w = 0; w < nworkers; ++w) go.push_back(std::make_unique<std::binary_semaphore>(0));
    for (int w = 1; w < nworkers; ++w) threads.emplace_back([this, w] { thread_main(w); });
  }

  ~Impl() {
    stopping.store(true, std::memory_order_release);
    for (std::size_t w = 1; w < go.size(); ++w) go[w]->release();
    threads.clear();  // joins
#if defined(OPTCOLL_FIBERS_TSAN)
    for (auto& f : fibers) {
      if (f->tsan != nullptr) __tsan_destroy_fiber(f->tsan);
    }
#endif
  }

  void thread_main(int w) {
    while (true) {
      go[static_cast<std::size_t>(w)]->acquire();
      if (stopping.load(std::memory_order_acquire)) return;
      serve(w);
      if (active_workers.fetch_sub(1, std::memory_order_acq_rel) == 1) all_done.release();
    }
  }

  void run(const std::function<void(Rank)>& fn) {
    body = &fn;
    const auto nworkers = workers.size();
    const auto nranks = fibers.size();
    for (std::size_t w = 0; w < nworkers; ++w) {
      Worker& worker = workers[w];
      const std::lock_guard lock(worker.mutex);
      worker.held.clear();
      worker.next = 0;
    }
    for (std::size_t r = 0; r < nranks; ++r) {
      Fiber& f = *fibers[r];
      f.running = false;
      f.done = false;
      f.parked = false;
      start_fiber(f);
      Worker& worker = workers[r * nworkers / nranks];  // blocks of neighbouring ranks
      const std::lock_guard lock(worker.mutex);
      worker.held.push_back(static_cast<Rank>(r));
    }
    remaining.store(static_cast<Rank>(nranks), std::memory_order_release);
    active_workers.store(static_cast<int>(nworkers) - 1, std::memory_order_relaxed);
    for (std::size_t w = 1; w < nworkers; ++w) go[w]->release();
    serve(0);
    if (nworkers > 1) all_done.acquire();
    body = nullptr;
  }

  // A new fiber for this run on f's stack, entering fiber_entry on its first resume. The
  // last run's fiber ended in a jump that never returned: nothing on the stack is live.
  void start_fiber(Fiber& f) {
    f.context = fc::make_fcontext(f.stack.top(), f.stack.size(), &fiber_entry);
#if defined(OPTCOLL_FIBERS_TSAN)
    // A fresh ThreadSanitizer fiber per run: fiber_entry never returns, so its frame would
    // stay on a reused one's shadow stack.
    if (f.tsan != nullptr) __tsan_destroy_fiber(f.tsan);
    f.tsan = __tsan_create_fiber(0);
#endif
  }

  // The bottom of every fiber: runs the body, then jumps back to its worker for good. It
  // never returns (there is nothing to return to), and holds nothing that needs destroying.
  static void fiber_entry(fc::transfer_t from) noexcept {
    Fiber& f = *static_cast<Fiber*>(from.data);
    f.back = from.fctx;
#if defined(OPTCOLL_FIBERS_ASAN)
    f.fake_stack = nullptr;  // a new stack: nothing saved (the last run's is gone)
#endif
    f.pool->arrived_in_fiber(f);
    (*f.pool->body)(f.rank);
    f.done = true;
    f.pool->switch_to_worker(f, /*finished=*/true);
  }

  // From fiber f, to the worker that runs it: parks it (it goes on when a worker resumes
  // it) or, when finished, leaves it for good. The sanitizers are told in the same frame as
  // the jump, so that ThreadSanitizer's shadow call stacks stay balanced on both sides.
  void switch_to_worker(Fiber& f, bool finished) {
    (void)finished;  // (only ASan needs it)
#if defined(OPTCOLL_FIBERS_ASAN)
    const Worker& worker = workers[static_cast<std::size_t>(f.worker)];
    __sanitizer_start_switch_fiber(finished ? nullptr : &f.fake_stack, worker.stack_bottom,
                                   worker.stack_size);
#endif
#if defined(OPTCOLL_FIBERS_TSAN)
    __tsan_switch_to_fiber(workers[static_cast<std::size_t>(f.worker)].tsan, 0);
#endif
    const fc::transfer_t resumed = fc::jump_fcontext(f.back, nullptr);
    // Only a parked fiber gets here: resumed by a worker (perhaps another one).
    f.back = resumed.fctx;
    arrived_in_fiber(f);
  }

  // On fiber f's stack after a switch from worker f.worker: ASan learns that worker's stack.
  void arrived_in_fiber(Fiber& f) {
#if defined(OPTCOLL_FIBERS_ASAN)
    Worker& w = workers[static_cast<std::size_t>(f.worker)];
    __sanitizer_finish_switch_fiber(f.fake_stack, &w.stack_bottom, &w.stack_size);
#else
    (void)f;
#endif
  }

  // Runs fiber r, held by worker w and marked running, until it parks or ends; returns the
  // next ready fiber of w, marked running, or kNoRank.
  Rank resume(int w, Rank r) {
    Fiber& f = *fibers[static_cast<std::size_t>(r)];
    Worker& worker = workers[static_cast<std::size_t>(w)];
    f.worker = w;
#if defined(OPTCOLL_FIBERS_ASAN)
    __sanitizer_start_switch_fiber(&worker.fake_stack, f.stack.bottom(), f.stack.size());
#endif
#if defined(OPTCOLL_FIBERS_TSAN)
    __tsan_switch_to_fiber(f.tsan, 0);
#endif
    f.context = fc::jump_fcontext(f.context, &f).fctx;  // back when it parks or ends
#if defined(OPTCOLL_FIBERS_ASAN)
    __sanitizer_finish_switch_fiber(worker.fake_stack, nullptr, nullptr);
#endif
    bool finished = false;
    Rank next = kNoRank;
    {
      const std::lock_guard lock(worker.mutex);
      f.running = false;
      if (f.done) {
        worker.held.erase(std::find(worker.held.begin(), worker.held.end(), r));
        finished = true;
      }
      Clock::time_point now{};
      next = take_ready_locked(worker, now);  // under the same lock: one lock per switch
    }
    if (finished && remaining.fetch_sub(1, std::memory_order_acq_rel) == 1) wake_all();
    return next;
  }

  // The run is over: the workers asleep must not wait for their timers to find out.
  void wake_all() {
    for (Worker& worker : workers) {
      {
        const std::lock_guard lock(worker.mutex);
        ++worker.pokes;
      }
      worker.wake.notify_one();
    }
  }

  // Whether a fiber that is not running may run now (`now` is read on demand, once).
  static bool ready(const Fiber& f, Clock::time_point& now) {
    if (!f.parked) return true;
    if (f.news->load(std::memory_order_acquire) != f.seen) return true;
    if (now == Clock::time_point{}) now = Clock::now();
    return now >= f.deadline;
  }

  // A ready fiber of worker `from`, marked running and moved to worker `to` (from == to: no
  // move); kNoRank if none. A worker waits for its own mutex but only tries another's.
  Rank take_ready(int from, int to, Clock::time_point& now) {
    Worker& source = workers[static_cast<std::size_t>(from)];
    if (from == to) {
      const std::lock_guard lock(source.mutex);
      return take_ready_locked(source, now);
    }
    std::unique_lock lock(source.mutex, std::try_to_lock);
    if (!lock.owns_lock()) return kNoRank;
    const std::size_t i = find_ready(source, now);
    if (i == kNone) return kNoRank;
    const Rank r = source.held[i];
    source.held.erase(source.held.begin() + static_cast<std::ptrdiff_t>(i));
    lock.unlock();
    Worker& target = workers[static_cast<std::size_t>(to)];
    const std::lock_guard target_lock(target.mutex);
    target.held.push_back(r);
    return r;
  }

  // take_ready() of a worker's own list, its mutex held.
  Rank take_ready_locked(Worker& worker, Clock::time_point& now) {
    const std::size_t i = find_ready(worker, now);
    if (i == kNone) return kNoRank;
    worker.next = i + 1;
    return worker.held[i];
  }

  // The index in worker.held of a ready fiber, marked running, looking round robin from
  // `next`; kNone if none. The worker's mutex is held.
  static constexpr std::size_t kNone = static_cast<std::size_t>(-1);
  std::size_t find_ready(Worker& worker, Clock::time_point& now) {
    const std::size_t n = worker.held.size();
    for (std::size_t k = 0; k < n; ++k) {
      const std::size_t i = (worker.next + k) % n;
      Fiber& f = *fibers[static_cast<std::size_t>(worker.held[i])];
      if (f.running || !ready(f, now)) continue;
      f.running = true;
      return i;
    }
    return kNone;
  }

  // The earliest deadline of worker w's parked fibers (Clock::time_point::max() if none).
  Clock::time_point earliest_deadline(int w) {
    Worker& worker = workers[static_cast<std::size_t>(w)];
    const std::lock_guard lock(worker.mutex);
    Clock::time_point earliest = Clock::time_point::max();
    for (const Rank r : worker.held) {
      const Fiber& f = *fibers[static_cast<std::size_t>(r)];
      if (!f.running && f.parked) earliest = std::min(earliest, f.deadline);
    }
    return earliest;
  }

  Rank find_work(int w, Clock::time_point& now) {
    const Rank own = take_ready(w, w, now);
    if (own != kNoRank) return own;
    const int n = static_cast<int>(workers.size());
    for (int k = 1; k < n; ++k) {
      const Rank stolen = take_ready((w + k) % n, w, now);
      if (stolen != kNoRank) return stolen;
    }
    return kNoRank;
  }

  // Worker w's loop for one run: until every fiber has ended.
  void serve(int w) {
    Worker& worker = workers[static_cast<std::size_t>(w)];
#if defined(OPTCOLL_FIBERS_TSAN)
    worker.tsan = __tsan_get_current_fiber();  // this thread's own (worker 0: run()'s caller)
#endif
    std::optional<Clock::time_point> idle_since;
    while (remaining.load(std::memory_order_acquire) > 0) {
      // Read before the scan: a change after it is a reason to scan again.
      const std::uint64_t seen = changes.load(std::memory_order_acquire);
      Clock::time_point now{};
      Rank r = find_work(w, now);
      if (r != kNoRank) {
        while (r != kNoRank) r = resume(w, r);
        idle_since.reset();
        continue;
      }
      // Nothing ready anywhere: wait for a change (or a deadline) without touching the
      // workers' mutexes, which the busy workers need. Spin while the peers it waits for run
      // (on the other CPUs), then yield the CPU between looks, then sleep.
      if (now == Clock::time_point{}) now = Clock::now();
      if (!idle_since) idle_since = now;
      const auto idle = now - *idle_since;
      if (idle >= kSpinBudget + kYieldBudget) {
        sleep(worker, w);
        continue;
      }
      const bool spinning = idle < kSpinBudget;
      for (int i = 0; i < 64 && changes.load(std::memory_order_acquire) == seen; ++i) {
        if (spinning) {
#if defined(__x86_64__) || defined(__i386__)
          __builtin_ia32_pause();
#endif
        } else {
          std::this_thread::yield();
        }
      }
    }
  }

  // Sleeps until poked, the earliest deadline of w's fibers, or kStealInterval (to look for
  // ready fibers held by a worker that is busy), whichever is first.
  void sleep(Worker& worker, int w) {
    const auto until = std::min(earliest_deadline(w), Clock::now() + kStealInterval);
    std::unique_lock lock(worker.mutex);
    worker.sleeping.store(true, std::memory_order_seq_cst);
    // After `sleeping` is visible: a news change after this check pokes, one before it is
    // seen here (poke() reads `sleeping` after its change, both sequentially consistent).
    std::atomic_thread_fence(std::memory_order_seq_cst);
    Clock::time_point now{};
    bool any_ready = false;
    for (const Rank r : worker.held) {
      const Fiber& f = *fibers[static_cast<std::size_t>(r)];
      if (!f.running && ready(f, now)) any_ready = true;
    }
    const std::uint32_t pokes = worker.pokes;
    if (!any_ready && remaining.load(std::memory_order_acquire) > 0) {
      worker.wake.wait_until(lock, until, [&] { return worker.pokes != pokes; });
    }
    worker.sleeping.store(false, std::memory_order_relaxed);
  }

  void park(Rank rank, const std::atomic<std::uint32_t>& news, std::uint32_t seen,
            Clock::time_point deadline) {
    Fiber& f = *fibers[static_cast<std::size_t>(rank)];
    f.news = &news;
    f.seen = seen;
    f.deadline = deadline;
    f.parked = true;
    switch_to_worker(f, false);
    f.parked = false;
  }

  void poke(Rank rank) {
    // Which worker holds it may change under us; waking a worker that no longer holds it
    // costs one empty scan, and its new holder is running (it took it while ready). The
    // increment is sequentially consistent: the fence of the `sleeping` handshake.
    changes.fetch_add(1, std::memory_order_seq_cst);
    for (Worker& worker : workers) {
      if (!worker.sleeping.load(std::memory_order_seq_cst)) continue;
      bool holds = false;
      {
        const std::lock_guard lock(worker.mutex);
        holds = std::find(worker.held.begin(), worker.held.end(), rank) != worker.held.end();
        if (holds) ++worker.pokes;
      }
      if (holds) worker.wake.notify_one();
    }
  }

  static constexpr std::chrono::milliseconds kStealInterval{2};

  std::vector<std::unique_ptr<Fiber>> fibers;
  std::vector<Worker> workers;
  const std::function<void(Rank)>* body = nullptr;
  std::atomic<Rank> remaining{0};
  // Bumped by every poke (a rank's news changed): what an idle worker watches.
  alignas(64) std::atomic<std::uint64_t> changes{0};
  std::atomic<int> active_workers{0};
  std::binary_semaphore all_done{0};
  std::vector<std::unique_ptr<std::binary_semaphore>> go;
  std::atomic<bool> stopping{false};
  std::vector<std::jthread> threads;  // last: started once everything above exists
};

FiberPool::FiberPool(Rank nranks, int workers, std::size_t stack_bytes)
    : impl_(std::make_unique<Impl>(nranks, std::max(1, std::min<int>(workers, nranks)),
                                   stack_bytes)) {}

FiberPool::~FiberPool() = default;

int FiberPool::workers() const { return static_cast<int>(impl_->workers.size()); }

void FiberPool::run(const std::function<void(Rank)>& body) { impl_->run(body); }

void FiberPool::park(Rank rank, const std::atomic<std::uint32_t>& news, std::uint32_t seen,
                     Clock::time_point deadline) {
  impl_->park(rank, news, seen, deadline);
}

void FiberPool::poke(Rank rank) { impl_->poke(rank); }

}  // namespace optcoll::threads
