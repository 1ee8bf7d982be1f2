// SPDX-License-Identifier: Apache-2.0
// File: the simulator's queues, all ordered by (time, rank, op index), the one order
// docs/design.md, "Simulator semantics (contract)", fixes for everything that happens at the same
// instant: a 4-ary min-heap (each rank's queues of work blocked on a busy resource) and the event
// queue, which hands out all completions of one instant at once.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <unordered_map>
#include <utility>
#include <vector>

#include "optcoll/model/error.h"
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
// of them at a time; a list's top is its first entry parked there. Transfers first wait in
// nearly the order the engine tries them, (time, rank, op), so adding is appending but for a
// few; moving a transfer between its two lists is a change of where it is parked (the queues
// they replace moved each one: a pop and a push, often into a heap; a many-to-many schedule
// moves its transfers O(p^3) times).
// Which entries are parked in a list is a bitset beside its entries, so that finding a list's
// top reads 64 entries per word: it used to test the entries one by one, a look-up of the
// transfer's tag each, and alltoall/linear at p = 2,048 spent three quarters of its
// simulation there (most of a list's entries are parked at their other end). An entry knows
// its place in its other list, so that moving the top there touches no per-transfer array
// (the many-to-many schedules under a thread model are mostly such moves).
// Entries of transfers that started are dropped once they are half of a list.
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
    std::int32_t other = -1;  // its index in its other list (kept by WaitLists)
    Item item() const { return Item{time, order, gid, -1}; }
  };
  enum Side : std::uint8_t { kSends = 0, kReceives = 1 };

  // Transfers are named by gids below `gids`; call before the first add().
  void set_gid_count(std::size_t gids) {
    // Not initialised: a place is written when its entry is added and read only after both of
    // its transfer's entries were (so the pages of transfers that never wait stay untouched).
    place_ = std::make_unique_for_overwrite<std::array<std::int32_t, 2>[]>(gids);
  }
  // Rank `rank`'s list of `side`.
  std::int32_t create(Side side, std::int32_t rank) {
    auto& of_rank = list_of_rank_[side];
    if (of_rank.size() <= static_cast<std::size_t>(rank)) {
      of_rank.resize(static_cast<std::size_t>(rank) + 1, -1);
    }
    lists_.emplace_back();
    lists_.back().side = side;
    of_rank[static_cast<std::size_t>(rank)] = static_cast<std::int32_t>(lists_.size() - 1);
    return of_rank[static_cast<std::size_t>(rank)];
  }
  // Adds transfer `entry` (parked nowhere yet) to its sender's send list and its receiver's
  // receive list (both created), each in key order: at the end but for transfers that first
  // wait in a later round of the same instant (after computations that take no time) with an
  // earlier key.
  void add(const Entry& entry) {
    const std::size_t in_sends = insert(kSends, entry);
    const std::size_t in_receives = insert(kReceives, entry);
    sends_of(entry).entries[in_sends].other = static_cast<std::int32_t>(in_receives);
    receives_of(entry).entries[in_receives].other = static_cast<std::int32_t>(in_sends);
  }
  // Transfers parked in the list: empty() is true when there are none.
  bool empty(std::int32_t list) const {
    return lists_[static_cast<std::size_t>(list)].parked_count == 0;
  }
  // Transfer `gid`, an entry of the list, is parked there now.
  void park(std::int32_t list, std::int32_t gid) {
    List& l = lists_[static_cast<std::size_t>(list)];
    park_at(l, static_cast<std::size_t>(place_[static_cast<std::size_t>(gid)][l.side]));
  }
  // The list's top (top() returned it) leaves it and is parked in its other list.
  void move_top_to_other(std::int32_t list) {
    List& l = lists_[static_cast<std::size_t>(list)];
    const Entry& entry = l.entries[l.cursor];
    List& other = l.side == kSends ? receives_of(entry) : sends_of(entry);
    park_at(other, static_cast<std::size_t>(entry.other));
    take_top(list);
  }
  // One of the list's transfers started (is no longer waiting anywhere).
  void add_started(std::int32_t list) { ++lists_[static_cast<std::size_t>(list)].started; }
  // Back to the list's first entry, for a new pass over it; drops the started entries
  // (started(gid)) once they are half of it.
  template <typename Started>
  void rewind(std::int32_t list, Started started) {
    List& l = lists_[static_cast<std::size_t>(list)];
    if (l.started >= kCompactMin && 2 * l.started >= l.entries.size()) compact(l, started);
    l.cursor = 0;
  }
  // The first entry at or after the cursor that is parked in the list (the list must not be
  // empty); the cursor stays on it.
  const Entry& top(std::int32_t list) {
    List& l = lists_[static_cast<std::size_t>(list)];
    std::size_t word = l.cursor / 64;
    std::uint64_t bits = l.parked.word(word) & (~std::uint64_t{0} << (l.cursor % 64));
    while (bits == 0) {
      OPTCOLL_CHECK(++word < l.parked.words(), "wait list {}: no parked entry at or after {}", list,
                    l.cursor);
      bits = l.parked.word(word);
    }
    l.cursor = word * 64 + static_cast<std::size_t>(std::countr_zero(bits));
    return l.entries[l.cursor];
  }
  // The entry top() returned leaves the list (it is no longer parked there); the cursor
  // moves past it.
  void take_top(std::int32_t list) {
    List& l = lists_[static_cast<std::size_t>(list)];
    l.parked.clear(l.cursor);
    ++l.cursor;
    --l.parked_count;
  }

 private:
  static constexpr std::size_t kCompactMin = 64;
  // A bitset whose first word is kept inline: most lists are short, and the list's record is
  // in the cache when its bits are read (a separate first word was a miss per top()).
  class Bits {
   public:
    std::size_t words() const { return 1 + rest_.size(); }
    std::uint64_t word(std::size_t i) const { return i == 0 ? first_ : rest_[i - 1]; }
    std::uint64_t& word(std::size_t i) { return i == 0 ? first_ : rest_[i - 1]; }
    bool test(std::size_t i) const { return ((word(i / 64) >> (i % 64)) & 1) != 0; }
    void set(std::size_t i) { word(i / 64) |= std::uint64_t{1} << (i % 64); }
    void clear(std::size_t i) { word(i / 64) &= ~(std::uint64_t{1} << (i % 64)); }
    // Room for `bits` bits (new ones clear).
    void fit(std::size_t bits) { rest_.resize(std::max<std::size_t>((bits + 63) / 64, 1) - 1, 0); }

   private:
    std::uint64_t first_ = 0;
    std::vector<std::uint64_t> rest_;
  };
  struct List {
    std::vector<Entry> entries;
    Bits parked;                    // bit i: entries[i] is parked here
    std::size_t cursor = 0;         // where top() looks from
    std::int32_t parked_count = 0;  // transfers parked in it
    std::size_t started = 0;        // entries whose transfers started
    Side side = kSends;
  };
  List& sends_of(const Entry& entry) {
    return lists_[static_cast<std::size_t>(
        list_of_rank_[kSends][static_cast<std::size_t>(entry.sender)])];
  }
  List& receives_of(const Entry& entry) {
    return lists_[static_cast<std::size_t>(
        list_of_rank_[kReceives][static_cast<std::size_t>(entry.receiver)])];
  }
  static void park_at(List& l, std::size_t at) {
    l.parked.set(at);
    ++l.parked_count;
  }
  // Entry i of list `l` is at index i now: its place, and its other entry's `other`, say so.
  void placed(List& l, std::size_t i) {
    const Entry& entry = l.entries[i];
    auto& place = place_[static_cast<std::size_t>(entry.gid)];
    place[l.side] = static_cast<std::int32_t>(i);
    const std::int32_t there = place[1 - l.side];  // added to both lists before it moves
    List& other = l.side == kSends ? receives_of(entry) : sends_of(entry);
    other.entries[static_cast<std::size_t>(there)].other = static_cast<std::int32_t>(i);
  }
  // `entry` inserted in key order into its list of `side`; returns its index.
  std::size_t insert(Side side, const Entry& entry) {
    List& l = side == kSends ? sends_of(entry) : receives_of(entry);
    std::size_t at = l.entries.size();
    while (at > 0 && before(entry.item(), l.entries[at - 1].item())) --at;
    l.entries.insert(l.entries.begin() + static_cast<std::ptrdiff_t>(at), entry);
    insert_clear_bit(l.parked, at, l.entries.size());
    // The new entry's place (add() links it to its other entry); the ones after it moved.
    place_[static_cast<std::size_t>(entry.gid)][side] = static_cast<std::int32_t>(at);
    for (std::size_t i = at + 1; i < l.entries.size(); ++i) placed(l, i);
    if (at <= l.cursor) ++l.cursor;
    return at;
  }
  // A clear bit inserted at `at` into `bits`, which holds `size` - 1 bits before: the bits
  // from `at` on move up by one.
  static void insert_clear_bit(Bits& bits, std::size_t at, std::size_t size) {
    bits.fit(size);
    const std::size_t first = at / 64;
    for (std::size_t w = bits.words() - 1; w > first; --w) {
      bits.word(w) = (bits.word(w) << 1) | (bits.word(w - 1) >> 63);
    }
    const std::uint64_t below = (std::uint64_t{1} << (at % 64)) - 1;
    bits.word(first) = (bits.word(first) & below) | ((bits.word(first) & ~below) << 1);
  }
  template <typename Started>
  void compact(List& l, Started started) {
    Bits bits;
    bits.fit(l.entries.size());
    std::size_t kept = 0;
    for (std::size_t i = 0; i < l.entries.size(); ++i) {
      if (started(l.entries[i].gid)) continue;
      if (l.parked.test(i)) bits.set(kept);
      l.entries[kept] = l.entries[i];
      placed(l, kept);
      ++kept;
    }
    l.entries.resize(kept);
    bits.fit(kept);
    l.parked = std::move(bits);
    l.started = 0;
  }
  std::vector<List> lists_;
  // By gid: its entry's index in its send list and in its receive list.
  std::unique_ptr<std::array<std::int32_t, 2>[]> place_;
  std::vector<std::int32_t> list_of_rank_[2];  // by rank: its send / receive list
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
