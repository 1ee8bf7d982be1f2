// SPDX-License-Identifier: Apache-2.0
// File: how long a waiting rank that has a CPU of its own keeps polling before it sleeps,
// for both backends (the thread transport's waits and world, the MPI transport's polling).
//
// Measured on a 16-core node (KVM guest, Open MPI 4.1.6, p = 16, docs/performance.md "Thread
// backend against Open MPI, p = 16"): with a 20 us spin (threads) or 500
// us of polling followed by sleeps of 50 us to 1 ms (MPI), one rank that fell asleep woke 50-100 us
// late (an idle virtual CPU wakes through the hypervisor) or up to a millisecond late (a timed
// sleep), so its peers waited past their own budget and fell asleep too: the waits fed each other.
// An 8 B allreduce on threads took 122 us (Open MPI: 4 us) and a ring exchange step over MPI
// 4.5-5.9 ms instead of microseconds. MPI libraries poll without a limit; optcoll polls for
// kLongSpin, which a collective's waits on a quiet node stay well inside, and sleeps only
// after it: a wait that long costs at most a few per cent more by sleeping.
//
// Where other programs keep the node's CPUs busy (the ranks do not outnumber the CPUs, but
// busy processes beside them do), a long spin is harmful: a spinner that the kernel
// preempts waits for its next time slice (milliseconds) when its message comes, where a
// sleeper is woken at once. Measured on the 2-core VM beside two busy loops: a p = 2 thread
// allreduce of 256 KiB took 0.5-2.4 ms per call with a 2 ms spin that stopped at the first
// involuntary context switch it saw (it sees it only once the slice is lost), against
// 0.2-0.6 ms with a 20 us spin in the same runs. So the long budget applies only while the
// node is not oversubscribed:
// the kernel's count of runnable tasks (/proc/loadavg, sampled at most every kLoadSample for
// the whole process) is at most the node's CPUs. Otherwise waits use their short budget, as
// before this change.
//
// On a node of kToleranceFromCpus CPUs or more one runnable task beyond the CPUs is
// tolerated: a job with a rank on every CPU is at the limit by itself, and any task that runs
// for a moment (a napping MPI process, a kernel thread) pushed a sample over, bringing back
// the short budget with its sleeps and late wake-ups: the likely cause, not established, of
// 8 B thread allreduces at p = 16 on the 16-core node taking 77-79 us in two runs of three
// (5 us in the third). Two busy programs beside such a job still count; on smaller nodes one
// does.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <optional>

namespace optcoll {

// A pause instruction: tells the core this is a spin (yields the pipeline to a sibling
// hyperthread and saves power).
inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Whether more tasks are runnable on this node than it has online CPUs, as last sampled
// (a sample at most kLoadSample old; the first call samples). Thread-safe; false where the
// system does not say.
bool node_oversubscribed(std::chrono::steady_clock::time_point now);
// The runnable tasks in a line of /proc/loadavg ("0.53 0.44 0.40 3/251 12345": the fourth
// field's numerator); nullopt if the line is not of that form.
std::optional<long> runnable_tasks(const char* loadavg);
inline constexpr std::chrono::milliseconds kLoadSample{20};
inline constexpr long kToleranceFromCpus = 8;
// Whether `runnable` tasks oversubscribe `cpus` online CPUs (file comment).
constexpr bool oversubscribes(long runnable, long cpus) {
  return runnable > cpus + (cpus >= kToleranceFromCpus ? 1 : 0);
}

// The spin budget of waits (file comment): kLongSpin, or the short budget while the node is
// oversubscribed. Holds no state of its own: one serves any number of threads.
class SpinBudget {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::chrono::microseconds kLongSpin{2000};

  // `short_budget`: the budget while the node is oversubscribed.
  explicit SpinBudget(std::chrono::microseconds short_budget) : short_(short_budget) {}

  // The budget of a wait that starts at `now`.
  std::chrono::microseconds at(Clock::time_point now) const {
    return node_oversubscribed(now) ? short_ : kLongSpin;
  }

 private:
  std::chrono::microseconds short_;
};

// The naps of a wait that has polled its budget (MpiTransport::do_wait_some): the first is
// kFirstNap, each next one twice the last, up to kLongestNap, or up to kLongestNapCrowded where
// the node's ranks outnumber its CPUs. A nap ends late by up to its own length when the
// message comes early in it, and a crowded node's waits are long (every message waits for its
// receiver to be scheduled) and chained: in a tree each rank forwards only once it has woken.
// Measured on the emulated cluster (16 ranks on 2 cores, 4 hosts, 100 Mbit/s links): with naps
// of up to 1 ms a scatterv of 8 KiB per rank with spikes took 10.6 ms over Träff's adaptive
// binomial tree and 7.2 ms linearly where Open MPI's linear took 6.1 ms; with naps of at most
// 100 us, 6.3-6.5 ms (docs/results/cluster_nodes/irregular.table).
inline constexpr std::chrono::microseconds kFirstNap{50};
inline constexpr std::chrono::microseconds kLongestNap{1000};
inline constexpr std::chrono::microseconds kLongestNapCrowded{100};

inline std::chrono::microseconds next_nap(std::chrono::microseconds last, bool crowded) {
  return std::min(last * 2, crowded ? kLongestNapCrowded : kLongestNap);
}

// Calls `ready()`, with pause instructions between calls, until it returns true or
// budget.at(now) (at most `limit`) has passed; returns whether `ready()` did.
template <typename Ready>
bool spin_wait(Ready&& ready, const SpinBudget& budget, std::chrono::microseconds limit) {
  auto now = SpinBudget::Clock::now();
  const auto end = now + std::min(budget.at(now), limit);
  while (true) {
    for (int i = 0; i < 64; ++i) {
      if (ready()) return true;
      cpu_relax();
    }
    if (SpinBudget::Clock::now() >= end) return ready();
  }
}

}  // namespace optcoll
