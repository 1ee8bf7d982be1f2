// SPDX-License-Identifier: Apache-2.0
// File: the simulator's queues: (time, program order) for the heap, the run-merging sort,
// the blocked-work queues (in-order appends and out-of-order inserts) and the event queue's
// one-instant-at-a-time hand-out. Items carry a gid that orders nothing (the engine numbers
// ops otherwise): here it runs against the program order, so that a queue ordering by it
// would fail.
#include "optcoll/sim/event_queue.h"

#include <algorithm>
#include <random>
#include <vector>

#include <gtest/gtest.h>

namespace optcoll::sim::detail {
namespace {

// An op's gid in these tests: the reverse of its program order.
constexpr std::int32_t kOps = 100000;
std::int32_t gid_of(std::int32_t order) { return kOps - 1 - order; }
Item item(Time time, std::int32_t order) { return Item{time, order, gid_of(order), -1}; }

std::vector<Item> random_items(std::mt19937& rng, std::size_t n, int times) {
  std::vector<Item> items;
  std::vector<std::int32_t> orders(n);
  for (std::size_t i = 0; i < n; ++i) orders[i] = static_cast<std::int32_t>(i);
  std::shuffle(orders.begin(), orders.end(), rng);
  for (std::size_t i = 0; i < n; ++i) {
    items.push_back(item(static_cast<Time>(rng() % static_cast<unsigned>(times)), orders[i]));
  }
  return items;
}

bool same_order(const std::vector<Item>& a, const std::vector<Item>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].time != b[i].time || a[i].order != b[i].order || a[i].gid != b[i].gid) return false;
  }
  return true;
}

TEST(ItemHeap, PopsInTimeThenProgramOrder) {
  std::mt19937 rng(7);
  auto items = random_items(rng, 500, 20);
  ItemHeap heap;
  for (const auto& item : items) heap.push(item);
  std::vector<Item> popped;
  while (!heap.empty()) popped.push_back(heap.pop());
  std::sort(items.begin(), items.end(), before);
  EXPECT_TRUE(same_order(popped, items));
}

TEST(SortItems, SortedRunsAndArbitraryInput) {
  std::mt19937 rng(11);
  ItemSorter sorter;
  for (const std::size_t runs : {1u, 2u, 5u, 9u, 40u}) {
    // `runs` sorted runs of random length, as produced by rotating sorted blocks.
    auto items = random_items(rng, 300, 4);
    std::sort(items.begin(), items.end(), before);
    std::vector<Item> shuffled;
    const std::size_t chunk = items.size() / runs + 1;
    for (std::size_t k = runs; k-- > 0;) {
      for (std::size_t i = k * chunk; i < std::min(items.size(), (k + 1) * chunk); ++i) {
        shuffled.push_back(items[i]);
      }
    }
    sorter.sort(shuffled);
    EXPECT_TRUE(same_order(shuffled, items)) << runs << " runs";
  }
  auto random = random_items(rng, 1000, 3);
  auto expected = random;
  std::sort(expected.begin(), expected.end(), before);
  sorter.sort(random);
  EXPECT_TRUE(same_order(random, expected));
}

// Large unsorted batches take the radix sort: it must give before()'s order for any times
// (one instant, a few, fractions, -0 as 0, negative ones) and for port releases' negative
// orders, and reuse its buffers from one batch to the next.
TEST(SortItems, LargeBatchesOfAnyTimesAndOrders) {
  std::mt19937 rng(5);
  ItemSorter sorter;
  const std::vector<std::vector<Time>> time_sets{
      {2.5e-6},
      {0.0, -0.0, 1e-9, 3.0},
      {-1.0, 0.0, 1e-300, 7.25, 7.250000000000001, 1e300},
  };
  for (const auto& times : time_sets) {
    for (const std::size_t n : {1500u, 20000u}) {
      auto items = random_items(rng, n, 1);
      for (std::size_t i = 0; i < items.size(); ++i) {
        items[i].time = times[rng() % times.size()];
        if (i % 7 == 0) items[i].order = -(items[i].order + 1);  // a port release
      }
      auto expected = items;
      std::sort(expected.begin(), expected.end(), before);
      sorter.sort(items);
      EXPECT_TRUE(same_order(items, expected)) << times.size() << " times, " << n << " items";
    }
  }
}

TEST(BlockedQueues, KeepOrderWithInOrderAndOutOfOrderPushes) {
  std::mt19937 rng(3);
  BlockedQueues queues;
  const auto a = queues.create();
  const auto b = queues.create();
  auto items = random_items(rng, 200, 10);
  std::vector<Item> in_a;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i % 3 == 0) {
      queues.push(b, items[i]);
    } else {
      queues.push(a, items[i]);
      in_a.push_back(items[i]);
    }
    if (i % 17 == 16) {  // interleave pops with pushes
      std::sort(in_a.begin(), in_a.end(), before);
      const Item top = queues.pop(a);
      EXPECT_EQ(top.order, in_a.front().order);
      in_a.erase(in_a.begin());
    }
  }
  std::sort(in_a.begin(), in_a.end(), before);
  std::vector<Item> popped;
  while (!queues.empty(a)) popped.push_back(queues.pop(a));
  EXPECT_TRUE(same_order(popped, in_a));
  EXPECT_FALSE(queues.empty(b));
}

TEST(EventQueue, HandsOutOneInstantInProgramOrder) {
  EventQueue events;
  events.push(item(5, 9));
  events.push(item(2, 4));
  events.push(item(5, 1));
  events.push(item(2, 3));
  events.push(item(0, 7));
  std::vector<Item> instant;
  ASSERT_EQ(events.next_time(), 0);
  events.pop_instant(instant);
  ASSERT_EQ(instant.size(), 1u);
  events.push(item(0, 2));  // a zero-duration completion: the same time, a new instant
  ASSERT_EQ(events.next_time(), 0);
  events.pop_instant(instant);
  EXPECT_EQ(instant.front().order, 2);
  events.pop_instant(instant);
  ASSERT_EQ(instant.size(), 2u);
  EXPECT_EQ(instant[0].order, 3);
  EXPECT_EQ(instant[0].gid, gid_of(3));
  EXPECT_EQ(instant[1].order, 4);
  events.pop_instant(instant);
  ASSERT_EQ(instant.size(), 2u);
  EXPECT_EQ(instant[0].time, 5);
  EXPECT_EQ(instant[0].order, 1);
  EXPECT_TRUE(events.empty());
}

}  // namespace
}  // namespace optcoll::sim::detail
