// SPDX-License-Identifier: Apache-2.0
// File: calibration with every rank active (optcoll/api/calibrate_node.h): the node_beta fit on
// synthetic throughput curves whose saturation is known, and a real calibration at p = 3 on
// threads whose model is valid and whose parts agree with each other (no timing asserted:
// machines are noisy), and the gap's fit to the all-pairs exchange from 4 ranks on.
#include "optcoll/api/calibrate_node.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "optcoll/exec/threads/thread_transport.h"
#include "optcoll/exec/threads/world.h"
#include "optcoll/model/error.h"
#include "tests/exec/exec_helpers.h"

namespace optcoll {
namespace {

// A small, quick calibration (8 KiB exchanges, 64 KiB copies, 3 repetitions) on a thread
// world of p ranks: rank 0's result.
NodeCalibrationOptions quick_options() {
  NodeCalibrationOptions o;
  o.max_bytes = 8192;
  o.stream_bytes = 1 << 16;
  o.repetitions = 3;
  return o;
}

NodeCalibration calibrate_threads(Rank p, const NodeCalibrationOptions& o) {
  ThreadWorld world(p);
  NodeCalibration c;
  world.run([&](Transport& transport) {
    NodeCalibration mine = calibrate_node(transport, o);
    if (transport.rank() == 0) c = std::move(mine);
  });
  return c;
}

TEST(CalibrateNode, NodeBetaIsTheSaturationOfTheCopyCurve) {
  // One rank copies 10 GB/s; the node saturates at 25 GB/s: 10, 20, 25, 25.
  const std::vector<double> curve{10e9, 20e9, 25e9, 25e9};
  const FittedParameter fit = fit_node_beta(curve, 1 / 10e9);
  EXPECT_EQ(fit.name, "node_beta");
  EXPECT_DOUBLE_EQ(fit.value, 1 / 25e9);
  EXPECT_NEAR(fit.error, 0, 1e-12);
  // A curve that never saturates: the highest level, no error either.
  const FittedParameter linear = fit_node_beta({10e9, 20e9, 30e9}, 1 / 10e9);
  EXPECT_DOUBLE_EQ(linear.value, 1 / 30e9);
  EXPECT_NEAR(linear.error, 0, 1e-12);
  // One stray low point (k = 2) does not drag the level down: the curve's saturation, with
  // that point's error (min(20, 40) / 5 - 1 = 3) as the fit error.
  const FittedParameter stray = fit_node_beta({10e9, 5e9, 30e9, 40e9}, 1 / 10e9);
  EXPECT_DOUBLE_EQ(stray.value, 1 / 40e9);
  EXPECT_NEAR(stray.error, 3, 1e-12);
  // A curve that saturates a little above one level: the level that fits it exactly.
  const FittedParameter noisy = fit_node_beta({10e9, 20e9, 22e9}, 1 / 10e9);
  EXPECT_DOUBLE_EQ(noisy.value, 1 / 22e9);
  EXPECT_NEAR(noisy.error, 0, 1e-12);
  // A curve below one rank's own copy rate (ranks waiting for CPUs, noise): the node is
  // never slower than one copier alone.
  const FittedParameter slow = fit_node_beta({5e9, 6e9, 4e9}, 1 / 10e9);
  EXPECT_DOUBLE_EQ(slow.value, 1 / 10e9);
}

TEST(CalibrateNode, NicPortsIsTheMostStreamsMovedAtOnce) {
  // One port: k streams take k turns (or share one link: k transfers' bandwidth and one
  // latency, 0.1 here).
  FittedParameter fit = fit_nic_ports({1e-3, 2e-3, 3e-3, 4e-3});
  EXPECT_EQ(fit.name, "nic_ports");
  EXPECT_EQ(fit.value, 1);
  EXPECT_NEAR(fit.error, 0, 1e-12);
  EXPECT_EQ(fit_nic_ports({1.1e-3, 2.1e-3, 3.1e-3, 4.1e-3}).value, 1);
  // k = 2 already doubles the time: 1 port.
  EXPECT_EQ(fit_nic_ports({1e-3, 2e-3}).value, 1);
  // Two ports: two streams in one turn, three and four in two.
  fit = fit_nic_ports({1e-3, 1e-3, 2e-3, 2e-3});
  EXPECT_EQ(fit.value, 2);
  EXPECT_NEAR(fit.error, 0, 1e-12);
  // Four ports, 8 streams measured: in turns, and on links shared fairly (k / 4 from k = 4
  // on: 5 streams take 1.25, where the model's turns say 2: that error is the fit's).
  fit = fit_nic_ports({1e-3, 1e-3, 1e-3, 1e-3, 2e-3, 2e-3, 2e-3, 2e-3});
  EXPECT_EQ(fit.value, 4);
  EXPECT_NEAR(fit.error, 0, 1e-12);
  fit = fit_nic_ports({1e-3, 1e-3, 1e-3, 1e-3, 1.25e-3, 1.5e-3, 1.75e-3, 2e-3});
  EXPECT_EQ(fit.value, 4);
  EXPECT_NEAR(fit.error, 2 / 1.25 - 1, 1e-12);
  EXPECT_TRUE(testing::contains(fit.from, "k = 1..8 concurrent streams: 1.00, 1.00")) << fit.from;
  // Noisy curves (each time off by up to 15%) give the same ports.
  EXPECT_EQ(fit_nic_ports({1e-3, 1.8e-3, 3.3e-3, 3.6e-3}).value, 1);
  EXPECT_EQ(fit_nic_ports({1e-3, 1.08e-3, 1.9e-3, 2.15e-3}).value, 2);
  EXPECT_EQ(fit_nic_ports({1e-3, 0.95e-3, 1.1e-3, 1.05e-3, 2.1e-3, 1.9e-3, 2.2e-3, 1.95e-3}).value,
            4);
  // A single stream slower than the others (noise) does not make more ports than streams.
  fit = fit_nic_ports({1.5e-3, 1e-3, 1e-3});
  EXPECT_EQ(fit.value, 3);
  EXPECT_TRUE(testing::contains(fit.from, "no more streams were measured")) << fit.from;
  EXPECT_EQ(fit_nic_ports({1e-3}).value, 1);
  EXPECT_THROW(fit_nic_ports({}), Error);
  EXPECT_THROW(fit_nic_ports({1e-3, 0}), Error);
  EXPECT_THROW(fit_nic_ports({1e-3, std::nan("")}), Error);
}

TEST(CalibrateNode, OptionsAreCheckedBeforeMeasuring) {
  NodeCalibrationOptions o;
  o.op = "xor";
  EXPECT_THROW(check_calibration_options(o), Error);
  o = {};
  o.dtype = "complex";
  EXPECT_THROW(check_calibration_options(o), Error);
  o = {};
  o.send_modes.clear();
  EXPECT_THROW(check_calibration_options(o), Error);
  o = {};
  o.max_bytes = 16;
  EXPECT_THROW(check_calibration_options(o), Error);
}

TEST(CalibrateNode, AWorldOfThreeGivesAValidConsistentModel) {
  NodeCalibrationOptions o = quick_options();
  o.send_modes = {SendMode::kPort, SendMode::kReceiver};
  o.send_mode_min_bytes = 1024;
  const NodeCalibration c = calibrate_threads(3, o);
  EXPECT_EQ(c.ranks, 3);
  EXPECT_NO_THROW(validate(c.model));
  EXPECT_TRUE(c.model.per_byte);
  ASSERT_TRUE(c.model.node_beta.has_value());
  EXPECT_EQ(c.copy_throughput.size(), 3u);  // no cores given: every k up to p
  EXPECT_EQ(c.exchange.size(), c.ping_pong.size());
  EXPECT_EQ(c.model.send_mode_min_bytes, 1024u);
  EXPECT_TRUE(c.model.send_mode == SendMode::kPort || c.model.send_mode == SendMode::kReceiver);
  // alpha is the smallest exchange step less its bytes: the model predicts that step as
  // measured (8 B ask for too little memory to stretch anything).
  ASSERT_FALSE(c.checks.empty());
  EXPECT_NEAR(c.checks.front().predicted, c.checks.front().measured,
              1e-9 + 1e-6 * c.checks.front().measured);
  // The copy rate is the one-rank point of the curve it fits node_beta to.
  EXPECT_LE(*c.model.node_beta, c.model.copy * (1 + 1e-9));
  for (const auto& f : c.fitted) {
    EXPECT_TRUE(std::isfinite(f.value)) << f.name;
    EXPECT_GE(f.error, 0) << f.name;
  }
  // One node: nic_ports is not measured, and the calibration says so.
  ASSERT_EQ(c.unmeasured.size(), 1u);
  EXPECT_EQ(c.unmeasured[0].name, "nic_ports");
  EXPECT_EQ(c.unmeasured[0].value, 1);
  EXPECT_EQ(c.model.nic_ports, 1);
  EXPECT_TRUE(testing::contains(c.unmeasured[0].why, "one node")) << c.unmeasured[0].why;
}

TEST(CalibrateNode, AProtocolJumpIsARiseBeyondALinearCost) {
  // t(m) = 1 us + 1 ns/B: a linear cost, no jump, however steep.
  std::vector<PingPongSample> linear;
  for (std::size_t m = 64; m <= 65536; m *= 2) {
    linear.push_back({m, 1e-6 + 1e-9 * static_cast<double>(m)});
  }
  EXPECT_FALSE(find_protocol_jump(linear).has_value());
  // The same with 3 us more from 4096 B on: the jump is between 2048 and 4096 (index 5).
  std::vector<PingPongSample> jumped = linear;
  for (auto& s : jumped) {
    if (s.bytes >= 4096) s.seconds += 3e-6;
  }
  EXPECT_EQ(find_protocol_jump(jumped), std::optional<std::size_t>(5));
  // Noise of small messages (a rise and a fall of a third of the time) is not a jump, nor a
  // single slow sample (1.5 us at 512 B, then 0.5 us again).
  const std::vector<PingPongSample> noisy{
      {64, 0.45e-6}, {128, 0.6e-6}, {256, 0.4e-6}, {512, 0.7e-6}, {1024, 1.2e-6}};
  EXPECT_FALSE(find_protocol_jump(noisy).has_value());
  const std::vector<PingPongSample> spike{
      {64, 0.45e-6}, {128, 0.5e-6}, {256, 0.45e-6}, {512, 1.5e-6}, {1024, 0.5e-6}};
  EXPECT_FALSE(find_protocol_jump(spike).has_value());
  // Of two jumps, the larger (1.2 us more from 256 B on: 0.2 us past doubling there, 0.8 us
  // at 4096 B).
  std::vector<PingPongSample> two = jumped;
  for (auto& s : two) {
    if (s.bytes >= 256) s.seconds += 1.2e-6;
  }
  EXPECT_EQ(find_protocol_jump(two), std::optional<std::size_t>(5));
  EXPECT_FALSE(find_protocol_jump({}).has_value());
}

// A rank's transport that reports some of its receives complete later than they completed
// (emulated protocols and links): a subclass holds a receive when it is posted (hold()) and
// says, once it completed, when it may be reported (release_time()). No cooperative
// progress: only the rank's own thread uses the bookkeeping.
class HoldingTransport : public testing::ForwardingTransport {
 public:
  using Clock = std::chrono::steady_clock;
  using ForwardingTransport::ForwardingTransport;
  void attach(Progress& /*progress*/) override {}
  void detach() override {}

 protected:
  void hold(RequestId id) { holding_.insert(id); }
  // When held receive `id`, which completed just now, may be reported.
  virtual Clock::time_point release_time(RequestId id) = 0;

  void do_wait_some(std::chrono::milliseconds timeout, std::vector<RequestId>& done) override {
    const auto deadline = Clock::now() + timeout;
    for (;;) {
      std::vector<RequestId> got;
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
      ForwardingTransport::do_wait_some(held_.empty() ? std::max(left, std::chrono::milliseconds(0))
                                                      : std::chrono::milliseconds(0),
                                        got);
      for (const RequestId id : got) {
        if (holding_.erase(id) == 0) {
          done.push_back(id);
        } else {
          held_.emplace(id, release_time(id));
        }
      }
      const auto now = Clock::now();
      auto next = deadline;
      for (auto it = held_.begin(); it != held_.end();) {
        if (it->second <= now) {
          done.push_back(it->first);
          it = held_.erase(it);
        } else {
          next = std::min(next, it->second);
          ++it;
        }
      }
      if (!done.empty() || now >= deadline) return;
      if (!held_.empty()) std::this_thread::sleep_until(next);  // the CPU to the other ranks
    }
  }
  void do_cancel(std::span<const RequestId> ids) override {
    for (const RequestId id : ids) {
      holding_.erase(id);
      held_.erase(id);
    }
    ForwardingTransport::do_cancel(ids);
  }

 private:
  std::set<RequestId> holding_;                  // posted, to be held once complete
  std::map<RequestId, Clock::time_point> held_;  // complete, reported from then on
};

// A receive of more than `eager` bytes completes `delay` after its message came: an MPI
// library's rendezvous handshake, emulated over the thread transport.
class WithHandshake : public HoldingTransport {
 public:
  WithHandshake(Transport& inner, std::size_t eager, std::chrono::microseconds delay)
      : HoldingTransport(inner), eager_(eager), delay_(delay) {}
  RequestId irecv(Rank from, MsgKey key, std::span<std::byte> data) override {
    const RequestId id = HoldingTransport::irecv(from, key, data);
    if (data.size() > eager_) hold(id);
    return id;
  }

 protected:
  Clock::time_point release_time(RequestId /*id*/) override { return Clock::now() + delay_; }

 private:
  std::size_t eager_;
  std::chrono::microseconds delay_;
};

TEST(CalibrateNode, TheHandshakeAboveTheEagerLimitIsFoundAndFitted) {
  // Receives of more than 1000 B wait 5 ms more (far above what a loaded machine adds to a
  // step of a few microseconds); the search runs up to the "channel" at 8 KiB: doubling
  // sizes bracket the jump in (512, 1024], bisection narrows it to 16 B.
  NodeCalibrationOptions o = quick_options();
  o.find_handshake = true;
  o.own_protocol_from = 8192;
  NodeCalibration c;
  // Threads, not fibers (auto's choice on a loaded machine): the emulated handshake spins,
  // which as fibers on one worker would hold the other rank's wait back.
  ThreadWorld world(2, WorldOptions{std::chrono::seconds(30), RankExecution::kThreads});
  world.run([&](Transport& transport) {
    WithHandshake slow(transport, 1000, std::chrono::microseconds(5000));
    NodeCalibration mine = calibrate_node(slow, o);
    if (transport.rank() == 0) c = std::move(mine);
  });
  ASSERT_TRUE(c.handshake.has_value());
  EXPECT_LE(c.handshake->eager.bytes, 1000u);
  EXPECT_GT(c.handshake->waited.bytes, 1000u);
  EXPECT_LE(c.handshake->waited.bytes - c.handshake->eager.bytes, 16u);
  ASSERT_TRUE(c.model.rendezvous_bytes.has_value());
  EXPECT_EQ(*c.model.rendezvous_bytes, c.handshake->eager.bytes);
  EXPECT_EQ(c.model.rendezvous_max_bytes, std::optional<std::size_t>(8192));
  // The handshake's time is the delay (and what a loaded machine adds to the step past it).
  EXPECT_GT(c.model.rendezvous_alpha, 4e-3);
  EXPECT_LT(c.model.rendezvous_alpha, 10e-3);
  EXPECT_NO_THROW(validate(c.model));
  // The search measured 64 B .. 4096 B (7 sizes), then the bisection's.
  ASSERT_GE(c.handshake_steps.size(), 7u);
  EXPECT_EQ(c.handshake_steps[6].bytes, 4096u);
  const auto fitted = [&](const std::string& name) {
    return std::any_of(c.fitted.begin(), c.fitted.end(),
                       [&](const FittedParameter& f) { return f.name == name; });
  };
  EXPECT_TRUE(fitted("rendezvous_bytes"));
  EXPECT_TRUE(fitted("rendezvous_alpha"));
}

TEST(CalibrateNode, FromFourRanksTheGapFitsTheAllPairsExchange) {
  NodeCalibrationOptions o = quick_options();
  o.send_modes = {SendMode::kPort};
  const NodeCalibration c = calibrate_threads(4, o);
  ASSERT_TRUE(c.all_pairs.has_value());
  ASSERT_TRUE(c.send_gap.has_value());
  ASSERT_TRUE(c.model.send_gap.has_value());
  ASSERT_TRUE(c.model.receive_gap.has_value());
  EXPECT_EQ(*c.model.send_gap, *c.model.receive_gap);
  EXPECT_GE(*c.model.send_gap, c.send_gap->gap);  // never below the two-rank burst's
  const auto check = std::find_if(c.checks.begin(), c.checks.end(), [](const ModelCheck& k) {
    return k.what.starts_with("exchange of 8 B between every pair");
  });
  ASSERT_NE(check, c.checks.end());
  const double whole = c.model.transfer_time(0, 1, 1, sizeof(double));
  EXPECT_LE(*c.model.send_gap, std::max(whole, c.send_gap->gap) * (1 + 1e-9));
  if (*c.model.send_gap >= whole * (1 - 1e-9)) {
    // Raised as far as it goes (a port held for the whole transfer): still no slower than
    // measured (ranks that wait for CPUs can make the exchange slower than any gap).
    EXPECT_LE(check->predicted, check->measured * (1 + 2e-3));
  } else if (*c.model.send_gap > c.send_gap->gap) {
    // Raised to fit: the model predicts the exchange as measured (bisection to 0.1%).
    EXPECT_NEAR(check->predicted, check->measured, 2e-3 * check->measured);
  } else {
    EXPECT_GE(check->predicted, check->measured * (1 - 1e-9));  // the burst's gap sufficed
  }
}

TEST(CalibrateNode, BelowFourRanksTheGapIsTheBurstsAlone) {
  NodeCalibrationOptions o = quick_options();
  o.send_modes = {SendMode::kPort};
  const NodeCalibration c = calibrate_threads(2, o);
  EXPECT_FALSE(c.all_pairs.has_value());
  ASSERT_TRUE(c.send_gap.has_value());
  ASSERT_TRUE(c.model.send_gap.has_value());
  EXPECT_EQ(*c.model.send_gap, c.send_gap->gap);
}

// Messages between the two "nodes" of a thread world are slowed by a known delay per send,
// as a network would: the levels' ping-pongs must see it on the inter-node pair only.
class SlowBetweenNodes : public testing::ForwardingTransport {
 public:
  SlowBetweenNodes(Transport& inner, const Placement& placement, std::chrono::microseconds delay)
      : ForwardingTransport(inner), placement_(placement), delay_(delay) {}
  RequestId isend(Rank to, MsgKey key, std::span<const std::byte> data) override {
    if (node(to) != node(rank())) {
      const auto until = std::chrono::steady_clock::now() + delay_;
      while (std::chrono::steady_clock::now() < until) {
      }
    }
    return ForwardingTransport::isend(to, key, data);
  }

 private:
  std::int32_t node(Rank r) const { return placement_.node_of[static_cast<std::size_t>(r)]; }
  Placement placement_;
  std::chrono::microseconds delay_;
};

TEST(CalibrateNode, LevelsComeFromAPingPongWithinAndOneBetweenNodes) {
  const Placement placement{{0, 0, 1, 1}};
  NodeCalibrationOptions o = quick_options();
  o.max_bytes = 1024;
  o.repetitions = 3;
  NodeCalibration c;
  c.model.cores = 4;
  c.model.node_beta = 1e-10;
  c.fitted = {{"alpha", 1, "before", 0}, {"beta", 1, "before", 0}, {"node_beta", 1e-10, "", 0}};
  ThreadWorld world(4);
  world.run([&](Transport& transport) {
    // 8 ms: well above what a ping-pong within a node takes even with other tests loading
    // the machine (with 2 ms, one CI run under ASan measured alpha 1.0 ms within the node).
    SlowBetweenNodes slow(transport, placement, std::chrono::milliseconds(8));
    NodeCalibration mine = c;
    calibrate_levels(slow, placement, o, mine);
    if (transport.rank() == 0) c = std::move(mine);
  });
  ASSERT_TRUE(c.model.placement.has_value());
  EXPECT_EQ(c.model.placement->node_of, placement.node_of);
  ASSERT_TRUE(c.model.inter_alpha && c.model.inter_beta);
  EXPECT_GE(*c.model.inter_alpha, 6e-3);               // one send each way: 8 ms each
  EXPECT_LT(c.model.alpha, *c.model.inter_alpha / 4);  // ranks 0 and 1 share a node
  EXPECT_FALSE(c.model.cores.has_value());
  EXPECT_FALSE(c.model.node_beta.has_value());
  std::vector<std::string> names;
  for (const auto& f : c.fitted) names.push_back(f.name);
  EXPECT_EQ(names,
            (std::vector<std::string>{"alpha", "beta", "inter_alpha", "inter_beta", "nic_ports"}));
  EXPECT_TRUE(testing::contains(c.fitted[0].from, "ranks 0 and 1 (one node)")) << c.fitted[0].from;
  EXPECT_TRUE(testing::contains(c.fitted[2].from, "ranks 0 and 2 (two nodes)")) << c.fitted[2].from;
}

// Each node's network as the model has it (docs/cost_model.md, "Several nodes", one port per
// rank): a message of `bytes` between two nodes takes a turn of bytes * per_byte on one of its
// sending node's `ports` outgoing channels and one of the receiving node's `ports` incoming
// channels (the earliest free of each), once those and its sender's and receiver's ports are
// free, and arrives at the end of its turn. The turn is booked when the message is sent, so a
// sender that goes on at once keeps the channel busy however late the threads are scheduled.
// Shared by the ranks of one thread world.
class NodeLinks {
 public:
  using Clock = std::chrono::steady_clock;
  NodeLinks(const Placement& placement, int ports, std::chrono::nanoseconds per_byte)
      : placement_(placement),
        per_byte_(per_byte),
        out_(static_cast<std::size_t>(placement.nodes()),
             std::vector<Clock::time_point>(static_cast<std::size_t>(ports))),
        in_(out_),
        sending_(static_cast<std::size_t>(placement.nranks())),
        receiving_(sending_) {}
  std::int32_t node(Rank r) const { return placement_.node_of[static_cast<std::size_t>(r)]; }
  // Books the turn of the message `key` of `bytes` from rank `from` to rank `to`.
  void book(Rank from, Rank to, MsgKey key, std::size_t bytes) {
    const std::lock_guard lock(mutex_);
    auto& out = out_[static_cast<std::size_t>(node(from))];
    auto& in = in_[static_cast<std::size_t>(node(to))];
    auto& sender = sending_[static_cast<std::size_t>(from)];
    auto& receiver = receiving_[static_cast<std::size_t>(to)];
    const auto ready = std::max({Clock::now(), sender, receiver});
    auto& channel_out = channel(out, ready);
    auto& channel_in = channel(in, ready);
    const auto end =
        std::max({ready, channel_out, channel_in}) + per_byte_ * static_cast<std::int64_t>(bytes);
    channel_out = channel_in = sender = receiver = end;
    arrivals_[{from, to, key.epoch, key.seq}] = end;
  }
  // When that message arrives (booked before it was handed on, so before it can be received).
  Clock::time_point arrival(Rank from, Rank to, MsgKey key) {
    const std::lock_guard lock(mutex_);
    const auto it = arrivals_.find({from, to, key.epoch, key.seq});
    EXPECT_NE(it, arrivals_.end()) << "a message from rank " << from << " was not booked";
    if (it == arrivals_.end()) return Clock::now();
    const auto end = it->second;
    arrivals_.erase(it);
    return end;
  }

 private:
  // The channel for a turn ready at `ready`: of those free by then, the one free the latest
  // (a sender booking turn after turn stays on one channel and leaves the others to other
  // senders, as if the turns were taken in time order), else the earliest free.
  static Clock::time_point& channel(std::vector<Clock::time_point>& channels,
                                    Clock::time_point ready) {
    auto best = std::min_element(channels.begin(), channels.end());
    for (auto it = channels.begin(); it != channels.end(); ++it) {
      if (*it <= ready && *it > *best) best = it;
    }
    return *best;
  }

  Placement placement_;
  std::chrono::nanoseconds per_byte_;
  std::mutex mutex_;
  std::vector<std::vector<Clock::time_point>> out_;  // [node][channel]: free from
  std::vector<std::vector<Clock::time_point>> in_;
  std::vector<Clock::time_point> sending_;  // [rank]: its port free from
  std::vector<Clock::time_point> receiving_;
  std::map<std::tuple<Rank, Rank, std::uint32_t, std::int32_t>, Clock::time_point> arrivals_;
};

// A rank's transport over NodeLinks: its messages of 1 KiB or more to another node are booked
// when sent and handed on at once; a receive of one is reported complete at its arrival.
// Smaller messages (the synchronization's) take no turn: a NIC interleaves their packets with
// the streams' rather than queueing them behind whole messages.
class OverNodeLinks : public HoldingTransport {
 public:
  OverNodeLinks(Transport& inner, NodeLinks& links) : HoldingTransport(inner), links_(links) {}
  RequestId isend(Rank to, MsgKey key, std::span<const std::byte> data) override {
    if (crosses(to, data.size())) links_.book(rank(), to, key, data.size());
    return HoldingTransport::isend(to, key, data);
  }
  RequestId irecv(Rank from, MsgKey key, std::span<std::byte> data) override {
    const RequestId id = HoldingTransport::irecv(from, key, data);
    if (crosses(from, data.size())) {
      crossing_.emplace(id, std::make_pair(from, key));
      hold(id);
    }
    return id;
  }

 protected:
  Clock::time_point release_time(RequestId id) override {
    const auto it = crossing_.find(id);
    const Clock::time_point arrival = links_.arrival(it->second.first, rank(), it->second.second);
    crossing_.erase(it);
    return arrival;
  }
  void do_cancel(std::span<const RequestId> ids) override {
    for (const RequestId id : ids) crossing_.erase(id);
    HoldingTransport::do_cancel(ids);
  }

 private:
  bool crosses(Rank peer, std::size_t bytes) const {
    return bytes >= 1024 && links_.node(peer) != links_.node(rank());
  }
  NodeLinks& links_;
  std::map<RequestId, std::pair<Rank, MsgKey>> crossing_;  // receives of booked messages
};

// calibrate_levels over nodes whose links have `ports` channels each: rank 0's result. The
// streams' messages are the thread transport's eager size (4 KiB, 5 ms on a channel): their
// sends complete at once, so a sender books its next turn without waiting for its receiver
// (a larger message's send waits for the receiver's copy: a thread scheduled late would
// leave its channel idle between turns, gaps that more streams fill, which would look like
// more ports than there are).
NodeCalibration levels_over_links(const Placement& placement, int ports) {
  NodeCalibrationOptions o = quick_options();
  o.max_bytes = threads::ThreadTransport::kEagerBytes;
  NodeLinks links(placement, ports,
                  std::chrono::nanoseconds(5'000'000 / threads::ThreadTransport::kEagerBytes));
  NodeCalibration c;
  ThreadWorld world(placement.nranks());
  world.run([&](Transport& transport) {
    OverNodeLinks linked(transport, links);
    NodeCalibration mine;
    calibrate_levels(linked, placement, o, mine);
    if (transport.rank() == 0) c = std::move(mine);
  });
  return c;
}

TEST(CalibrateNode, NicPortsAreTheChannelsOfEmulatedNodeLinks) {
  // 2 nodes x 2 ranks over one channel each: two streams take two turns.
  NodeCalibration c = levels_over_links(block_placement(2, 2), 1);
  EXPECT_EQ(c.model.nic_ports, 1);
  ASSERT_EQ(c.nic_streams.size(), 2u);
  EXPECT_GT(c.nic_streams[1], 1.6 * c.nic_streams[0]);
  ASSERT_FALSE(c.fitted.empty());
  EXPECT_EQ(c.fitted.back().name, "nic_ports");
  EXPECT_TRUE(testing::contains(c.fitted.back().from,
                                "4096 B from ranks of node 0 to ranks of "
                                "node 1, k = 1..2 concurrent streams"))
      << c.fitted.back().from;
  EXPECT_TRUE(c.unmeasured.empty());
  // 2 nodes x 4 ranks over two channels each: 1 and 2 streams take one turn, 3 and 4 two
  // (of the times, only what the channels force is asserted: 4 streams take 2 turns at
  // least, where a loaded machine could make 2 streams slower than one).
  c = levels_over_links(block_placement(2, 4), 2);
  EXPECT_EQ(c.model.nic_ports, 2) << c.fitted.back().from;
  ASSERT_EQ(c.nic_streams.size(), 4u);
  EXPECT_GT(c.nic_streams[3], 1.6 * c.nic_streams[0]);
  ASSERT_TRUE(c.model.placement.has_value());
  EXPECT_NO_THROW(validate_for(c.model, 8));
}

TEST(CalibrateNode, NicPortsStayOneWithoutTwoNodesOfTwoRanks) {
  // Node 1 has one rank: no two nodes can run two streams; the model keeps 1 and says why.
  NodeCalibration c;
  c.model.nic_ports = 3;
  ThreadWorld world(3);
  world.run([&](Transport& transport) {
    NodeCalibration mine = c;
    calibrate_levels(transport, Placement{{0, 0, 1}}, quick_options(), mine);
    if (transport.rank() == 0) c = std::move(mine);
  });
  EXPECT_EQ(c.model.nic_ports, 1);
  EXPECT_TRUE(c.nic_streams.empty());
  ASSERT_EQ(c.unmeasured.size(), 1u);
  EXPECT_EQ(c.unmeasured[0].name, "nic_ports");
  EXPECT_EQ(c.unmeasured[0].value, 1);
  EXPECT_TRUE(testing::contains(c.unmeasured[0].why, "no two nodes with 2 ranks each"));
  for (const auto& f : c.fitted) EXPECT_NE(f.name, "nic_ports");
}

TEST(CalibrateNode, LevelsOfOneNodeChangeNothing) {
  NodeCalibration given;
  given.model.alpha = 3;
  NodeCalibration c;  // rank 0's result (ranks copy `given`, which nothing writes)
  ThreadWorld world(2);
  world.run([&](Transport& transport) {
    NodeCalibration mine = given;
    calibrate_levels(transport, Placement{{0, 0}}, quick_options(), mine);
    if (transport.rank() == 0) c = std::move(mine);
  });
  EXPECT_EQ(c.model.alpha, 3);
  EXPECT_FALSE(c.model.placement.has_value());
}

}  // namespace
}  // namespace optcoll
