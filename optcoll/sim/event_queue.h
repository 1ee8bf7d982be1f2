// SPDX-License-Identifier: Apache-2.0
// File: the simulator's queues, all ordered by (time, rank, op index), the one order
// docs/design.md, "Simulator semantics (contract)", fixes for everything that happens at the same
// instant: a 4-ary min-heap (each rank's queues of work blocked on a busy resource) and the event
// queue, which hands out all completions of one instant at once.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "optcoll/model/types.h"

namespace optcoll::sim::detail {

// A unit of simulated work or a completion: a time, the op it belongs to (a transfer is
// named by its Send) and that op's place in program order. The engine numbers its ops
// (gids) by op index across ranks, for locality (engine.h); `order` numbers them rank by
// rank in program order (op i of rank r is base[r] + i), so ordering by (time, order) *is*
// ordering by (time, rank, op index). A port release carries -(order + 1): it sorts before
// the completions of its instant.
struct Item {
  Time time = 0;           // event: when it happens; work: when it became ready
  std::int32_t order = 0;  // the op's program-order index (negative: a port release)
  std::int32_t gid = 0;    // the engine's index of the op
  std::int32_t from = -1;  // candidates: the blocked-work queue it was taken from; events: a kind
};

// Strict (time, rank, op) order; `order` is unique among live entries, so it is total.
inline bool before(const Item& a, const Item& b) {
  if (a.time != b.time) return a.time < b.time;
  return a.order < b.order;
}

// A 4-ary heap: shallower than a binary heap, so fewer cache misses per pop on queues of a
// few thousand entries (one per rank in flight).
class ItemHeap {
 public:
  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return heap_.size(); }
  const Item& top() const { return heap_.front(); }
  void reserve(std::size_t n) { heap_.reserve(n); }
  void clear() { heap_.clear(); }

  void push(const Item& item) {
    std::size_t i = heap_.size();
    heap_.push_back(item);
    while (i > 0) {
      const std::size_t parent = (i - 1) / kArity;
      if (!before(item, heap_[parent])) break;
      heap_[i] = heap_[parent];
      i = parent;
    }
    heap_[i] = item;
  }

  Item pop() {
    Item result = heap_.front();
    const Item last = heap_.back();
    heap_.pop_back();
    const std::size_t n = heap_.size();
    if (n == 0) return result;
    std::size_t i = 0;
    for (;;) {
      const std::size_t first = i * kArity + 1;
      if (first >= n) break;
      std::size_t best = first;
      const std::size_t end = first + kArity < n ? first + kArity : n;
      for (std::size_t c = first + 1; c < end; ++c) {
        if (before(heap_[c], heap_[best])) best = c;
      }
      if (!before(heap_[best], last)) break;
      heap_[i] = heap_[best];
      i = best;
    }
    heap_[i] = last;
    return result;
  }

 private:
  static constexpr std::size_t kArity = 4;
  std::vector<Item> heap_;
};

// The key of before()'s order as an unsigned 96-bit number, time_key(time) * 2^32 +
// order_key(order): a time's bits, sign flipped (all bits flipped if negative; -0 as +0),
// then the order with its sign flipped. Times are never NaN.
inline std::uint64_t time_key(Time time) {
  const auto bits = std::bit_cast<std::uint64_t>(time == 0 ? Time{0} : time);
  return (bits >> 63) != 0 ? ~bits : bits | (std::uint64_t{1} << 63);
}
inline std::uint32_t order_key(std::int32_t order) {
  return static_cast<std::uint32_t>(order) ^ 0x80000000u;
}

// Sorts by (time, rank, op), reusing its buffers from call to call. Work found in event
// order is mostly sorted already (in a ring, all but the wrap-around): a few sorted runs are
// merged in linear time each. Other large batches (10^5 to millions of items of a few times
// in a lock-step collective at p = 65,536) take a radix sort: comparison sorting them was a
// tenth of the simulation.
class ItemSorter {
 public:
  void sort(std::vector<Item>& items) {
    constexpr std::size_t kMaxRuns = 8;
    const auto less = [](const Item& a, const Item& b) { return before(a, b); };
    std::size_t run_starts[kMaxRuns];
    std::size_t runs = 0;
    for (std::size_t i = 1; i < items.size(); ++i) {
      if (!before(items[i], items[i - 1])) continue;
      if (runs == kMaxRuns) {
        if (items.size() < kRadixMin) {
          std::sort(items.begin(), items.end(), less);
        } else {
          radix_sort(items);
        }
        return;
      }
      run_starts[runs++] = i;
    }
    // Merge the runs from left to right: [0, start_k) is sorted after step k.
    for (std::size_t k = 0; k < runs; ++k) {
      const std::size_t end = k + 1 < runs ? run_starts[k + 1] : items.size();
      const auto first = items.begin();
      std::inplace_merge(first, first + static_cast<std::ptrdiff_t>(run_starts[k]),
                         first + static_cast<std::ptrdiff_t>(end), less);
    }
  }

 private:
  static constexpr std::size_t kRadixMin = 1024;
  static constexpr unsigned kBits = 11;
  static constexpr std::size_t kBuckets = std::size_t{1} << kBits;
  static constexpr unsigned kDigits = 9;  // ceil(96 / kBits)

  // Digit d (kBits bits from bit kBits * d) of the item's 96-bit key.
  static std::size_t digit(const Item& item, unsigned d) {
    const unsigned shift = kBits * d;
    const std::uint64_t high = time_key(item.time);
    std::uint64_t part = 0;
    if (shift >= 32) {
      part = high >> (shift - 32);
    } else {
      part = order_key(item.order) >> shift;
      if (shift + kBits > 32) part |= high << (32 - shift);
    }
    return static_cast<std::size_t>(part) & (kBuckets - 1);
  }

  // Least significant digit first, each pass a stable scatter between `items` and the
  // scratch buffer (each vector keeps its own storage); a digit every item shares (times of
  // one instant share all of theirs) costs no pass.
  void radix_sort(std::vector<Item>& items) {
    const std::size_t n = items.size();
    counts_.assign(kDigits * kBuckets, 0);
    for (const Item& item : items) {
      for (unsigned d = 0; d < kDigits; ++d) ++counts_[d * kBuckets + digit(item, d)];
    }
    scratch_.resize(n);
    Item* from = items.data();
    Item* to = scratch_.data();
    for (unsigned d = 0; d < kDigits; ++d) {
      std::uint32_t* count = counts_.data() + d * kBuckets;
      if (count[digit(from[0], d)] == n) continue;
      std::uint32_t sum = 0;
      for (std::size_t b = 0; b < kBuckets; ++b) count[b] = std::exchange(sum, sum + count[b]);
      for (std::size_t i = 0; i < n; ++i) to[count[digit(from[i], d)]++] = from[i];
      std::swap(from, to);
    }
    if (from != items.data()) std::copy(from, from + n, items.data());
  }

  std::vector<Item> scratch_;
  std::vector<std::uint32_t> counts_;
};

// Queues of blocked work (one per rank and resource), each in (time, rank, op) order, all
// sharing one pool of list nodes, so that a million ranks do not mean a million allocations.
// Work is mostly parked in order (a rank's ops as they become ready): an entry that is not
// before the queue's last one is appended to its list in O(1); the others go to a heap that
// the queue gets on first need.
class BlockedQueues {
 public:
  std::int32_t create() {
    queues_.emplace_back();
    return static_cast<std::int32_t>(queues_.size() - 1);
  }
  bool empty(std::int32_t q) const {
    const Queue& queue = queues_[static_cast<std::size_t>(q)];
    return queue.head < 0 && (queue.extra < 0 || extras_[queue.extra].empty());
  }
  const Item& top(std::int32_t q) const {
    const Queue& queue = queues_[static_cast<std::size_t>(q)];
    return from_list(queue) ? nodes_[queue.head].item : extras_[queue.extra].top();
  }
  void push(std::int32_t q, const Item& item) {
    Queue& queue = queues_[static_cast<std::size_t>(q)];
    if (queue.tail >= 0 && before(item, nodes_[queue.tail].item)) {
      if (queue.extra < 0) {
        queue.extra = static_cast<std::int32_t>(extras_.size());
        extras_.emplace_back();
      }
      extras_[queue.extra].push(item);
      return;
    }
    std::int32_t node = free_;
    if (node >= 0) {
      free_ = nodes_[node].next;
      nodes_[node] = Node{item, -1};
    } else {
      node = static_cast<std::int32_t>(nodes_.size());
      nodes_.push_back(Node{item, -1});
    }
    if (queue.tail >= 0) {
      nodes_[queue.tail].next = node;
    } else {
      queue.head = node;
    }
    queue.tail = node;
  }
  Item pop(std::int32_t q) {
    Queue& queue = queues_[static_cast<std::size_t>(q)];
    if (!from_list(queue)) return extras_[queue.extra].pop();
    const std::int32_t node = queue.head;
    const Item item = nodes_[node].item;
    queue.head = nodes_[node].next;
    if (queue.head < 0) queue.tail = -1;
    nodes_[node].next = free_;
    free_ = node;
    return item;
  }

 private:
  struct Node {
    Item item;
    std::int32_t next = -1;
  };
  struct Queue {
    std::int32_t head = -1;
    std::int32_t tail = -1;
    std::int32_t extra = -1;  // index into extras_, or -1
  };
  bool from_list(const Queue& queue) const {
    return queue.head >= 0 && (queue.extra < 0 || extras_[queue.extra].empty() ||
                               before(nodes_[queue.head].item, extras_[queue.extra].top()));
  }

  std::vector<Node> nodes_;
  std::int32_t free_ = -1;  // free list through Node::next
  std::vector<Queue> queues_;
  std::vector<ItemHeap> extras_;
};

// Lists of waiting transfers, one per rank and port (its sends, its receives), each in
// (time, rank, op) order. A transfer that cannot start is added to both of its lists (its
// sender's sends, its receiver's receives) when it first waits, and is parked in at most one
// of them at a time: the engine tags each transfer with the list it is parked in, and a
// list's top is its first entry parked there. Transfers first wait in nearly the order the
// engine tries them, (time, rank, op), so adding is appending but for a few; moving a
// transfer between its two lists is a change of tag (the queues they replace moved each one:
// a pop and a push, often into a heap; a many-to-many schedule moves its transfers O(p^3)
// times).
// Entries of transfers that started are dropped from a list's front as they reach it, and
// from anywhere in it once they are half of it.
class WaitLists {
 public:
  // A transfer in a list: its key (Item's time, order, gid), and what the engine needs to
  // tell, without looking it up, that it cannot start yet: its two ranks, and whether its
  // Send needs no port of its sender.
  struct Entry {
    Time time = 0;
    std::int32_t order = 0;
    std::int32_t gid = 0;
    std::int32_t sender = 0;
    std::int32_t receiver = 0;
    bool holds_nothing = false;
    Item item() const { return Item{time, order, gid, -1}; }
  };
  std::int32_t create() {
    lists_.emplace_back();
    return static_cast<std::int32_t>(lists_.size() - 1);
  }
  // Adds `entry` in key order: at the end but for transfers that first wait in a later
  // round of the same instant (after computations that take no time) with an earlier key.
  void add(std::int32_t list, const Entry& entry) {
    List& l = lists_[static_cast<std::size_t>(list)];
    std::size_t at = l.entries.size();
    while (at > l.front && before(entry.item(), l.entries[at - 1].item())) --at;
    l.entries.insert(l.entries.begin() + static_cast<std::ptrdiff_t>(at), entry);
    if (at <= l.cursor) ++l.cursor;
  }
  // Transfers parked in the list: empty() is true when there are none.
  bool empty(std::int32_t list) const { return lists_[static_cast<std::size_t>(list)].parked == 0; }
  void add_parked(std::int32_t list) { ++lists_[static_cast<std::size_t>(list)].parked; }
  // One of the list's transfers started (is no longer waiting anywhere).
  void add_started(std::int32_t list) { ++lists_[static_cast<std::size_t>(list)].started; }
  // Back to the list's first entry, for a new pass over it; drops the started entries
  // (started(gid)) once they are half of what is left.
  template <typename Started>
  void rewind(std::int32_t list, Started started) {
    List& l = lists_[static_cast<std::size_t>(list)];
    const std::size_t live = l.entries.size() - l.front;
    if (l.started >= kCompactMin && 2 * l.started >= live) {
      std::erase_if(l.entries, [&](const Entry& entry) { return started(entry.gid); });
      l.front = 0;
      l.started = 0;
    }
    l.cursor = l.front;
  }
  // The first entry at or after the cursor that `parked_here(gid)` holds (the list must not
  // be empty); the cursor stays on it. Started entries at the list's front are dropped.
  template <typename ParkedHere, typename Started>
  const Entry& top(std::int32_t list, ParkedHere parked_here, Started started) {
    List& l = lists_[static_cast<std::size_t>(list)];
    while (!parked_here(l.entries[l.cursor].gid)) {
      if (l.cursor == l.front && started(l.entries[l.cursor].gid)) {
        ++l.front;
        --l.started;
      }
      ++l.cursor;
    }
    if (l.front >= kCompactMin && 2 * l.front >= l.entries.size()) {  // a long dead front
      l.entries.erase(l.entries.begin(), l.entries.begin() + static_cast<std::ptrdiff_t>(l.front));
      l.cursor -= l.front;
      l.front = 0;
    }
    return l.entries[l.cursor];
  }
  // The entry top() returned leaves the list (it is no longer parked there); the cursor
  // moves past it.
  void take_top(std::int32_t list) {
    List& l = lists_[static_cast<std::size_t>(list)];
    ++l.cursor;
    --l.parked;
  }

 private:
  static constexpr std::size_t kCompactMin = 64;
  struct List {
    std::vector<Entry> entries;
    std::size_t front = 0;    // entries before it started
    std::size_t cursor = 0;   // where top() looks from
    std::int32_t parked = 0;  // transfers parked in it
    std::size_t started = 0;  // entries at or after `front` whose transfers started
  };
  std::vector<List> lists_;
};

// Completions, handed out one instant at a time. Collective schedules run in lock step, so
// thousands of events share an instant (half a million for a binomial tree over 2^20 ranks):
// a bucket per distinct time, sorted once when its instant comes, beats a heap of events.
class EventQueue {
 public:
  bool empty() const { return times_.empty(); }
  Time next_time() const { return times_.front(); }

  void push(const Item& item) {
    std::uint32_t bucket = 0;
    if (!buckets_.empty() && item.time == last_time_) {
      bucket = last_bucket_;
    } else {
      const auto [it, inserted] = index_.try_emplace(item.time, 0);
      if (inserted) {
        it->second = new_bucket();
        times_.push_back(item.time);
        std::push_heap(times_.begin(), times_.end(), std::greater<>());
      }
      bucket = it->second;
      last_time_ = item.time;
      last_bucket_ = bucket;
    }
    buckets_[bucket].push_back(item);
  }

  // Moves every event of the earliest instant into `out` (cleared first), in (rank, op)
  // order.
  void pop_instant(std::vector<Item>& out) {
    const Time time = times_.front();
    std::pop_heap(times_.begin(), times_.end(), std::greater<>());
    times_.pop_back();
    const auto it = index_.find(time);
    const std::uint32_t bucket = it->second;
    index_.erase(it);
    if (last_time_ == time) last_time_ = -1;
    out.clear();
    out.swap(buckets_[bucket]);
    free_.push_back(bucket);
    sorter_.sort(out);  // all of one time: (time, order) order is (rank, op) order
  }

 private:
  std::uint32_t new_bucket() {
    if (!free_.empty()) {
      const std::uint32_t b = free_.back();
      free_.pop_back();
      return b;
    }
    buckets_.emplace_back();
    return static_cast<std::uint32_t>(buckets_.size() - 1);
  }

  std::vector<Time> times_;                        // min-heap of the distinct pending times
  std::unordered_map<Time, std::uint32_t> index_;  // time -> bucket (never iterated)
  std::vector<std::vector<Item>> buckets_;
  std::vector<std::uint32_t> free_;
  Time last_time_ = -1;  // a one-entry cache: pushes of one instant mostly share a time
  std::uint32_t last_bucket_ = 0;
  ItemSorter sorter_;
};

}  // namespace optcoll::sim::detail
