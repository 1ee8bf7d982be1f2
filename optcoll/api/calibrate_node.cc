// SPDX-License-Identifier: Apache-2.0
// File: calibration with every rank of the world active (calibrate_node.h).
#include "optcoll/api/calibrate_node.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "optcoll/algorithms/registry.h"
#include "optcoll/api/rank_sync.h"
#include "optcoll/exec/executor.h"
#include "optcoll/exec/reduce_kernels.h"
#include "optcoll/model/error.h"
#include "optcoll/schedule/builder.h"
#include "optcoll/sim/simulator.h"

namespace optcoll {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::size_t kElem = sizeof(double);  // exchanges and fan-outs move doubles
// The all-pairs exchange fits the gap from this many ranks on (below, p - 2 is too few
// messages per port to tell a gap from the step's own noise).
constexpr Rank kAllPairsMinRanks = 4;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// (max - min) / median: how much a direct measurement moved between repetitions.
double spread(const std::vector<double>& v) {
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  const double m = median_of(v);
  return m > 0 ? (*hi - *lo) / m : 0;
}

double relative_error(double predicted, double measured) {
  return measured > 0 ? std::abs(predicted / measured - 1) : 0;
}

// Every rank below `active` runs `work` at once, `repetitions` times after a warm-up, each
// between a barrier and the slowest rank's end: the per-repetition times.
std::vector<double> concurrent(RankSync& sync, Rank active, int repetitions,
                               const std::function<void()>& work) {
  std::vector<double> times;
  for (int rep = 0; rep <= repetitions; ++rep) {
    sync.barrier();
    const auto start = Clock::now();
    if (sync.transport().rank() < active) work();
    const double slowest = sync.max(seconds_since(start));
    if (rep > 0) times.push_back(slowest);
  }
  return times;
}

// One step of a ring exchange: every rank sends `count` doubles to the next rank and
// receives as many from the previous one, at once.
Schedule ring_exchange(Rank p, Count count) {
  CollectiveSpec spec = make_spec(CollectiveKind::kAllgather, p, count);
  spec.elem_bytes = kElem;
  ScheduleBuilder b(spec, "calibrate/ring_exchange");
  for (Rank r = 0; r < p; ++r) {
    b.transfer(r, (r + 1) % p, Slice{Buf::kInput, 0, count}, Slice{Buf::kOutput, count * r, count});
  }
  return std::move(b).finish();
}

// Every rank sends `count` doubles to every other rank and receives as many from each, at
// once: the exchange that fits the send gap under load.
Schedule all_pairs_exchange(Rank p, Count count) {
  CollectiveSpec spec = make_spec(CollectiveKind::kAllgather, p, count);
  spec.elem_bytes = kElem;
  ScheduleBuilder b(spec, "calibrate/all_pairs_exchange");
  for (Rank shift = 1; shift < p; ++shift) {
    for (Rank r = 0; r < p; ++r) {
      b.transfer(r, (r + shift) % p, Slice{Buf::kInput, 0, count},
                 Slice{Buf::kOutput, count * r, count});
    }
  }
  return std::move(b).finish();
}

// Ranks below `active` each copy (or reduce) `count` elements of `elem_bytes` locally.
Schedule local_work(Rank p, Rank active, Count count, std::size_t elem_bytes, bool reduce) {
  CollectiveSpec spec = make_spec(CollectiveKind::kAllgather, p, count);
  spec.elem_bytes = elem_bytes;
  ScheduleBuilder b(spec, "calibrate/local_work");
  for (Rank r = 0; r < active; ++r) {
    const Slice dst{Buf::kOutput, count * r, count};
    if (reduce) {
      b.reduce(r, Slice{Buf::kInput, 0, count}, dst, Side::kLeft);
    } else {
      b.copy(r, Slice{Buf::kInput, 0, count}, dst);
    }
  }
  return std::move(b).finish();
}

Time predict(const Schedule& schedule, const CostModel& model) {
  const SimResult r = simulate(schedule, model);
  OPTCOLL_CHECK(r.status == SimStatus::kOk, "{} deadlocks in simulation", schedule.algorithm);
  return r.makespan;
}

// How time_schedule times: rounds of about `round` seconds (one probe call decides how many
// calls, at least `min_calls`, at most kMaxCalls); with `to_barrier`, each rank's time runs
// to a barrier after its calls, so that the slowest rank's is the window from the first
// rank's start to the last rank's end (ranks that leave the first barrier apart, and each
// time only their own calls, would otherwise hide work done while they were not timing).
constexpr double kRoundSeconds = 2e-3;
constexpr int kMaxCalls = 100;
struct Timing {
  double round = kRoundSeconds;
  int min_calls = 1;
  bool to_barrier = false;
};

// The slowest rank's time per call of `calls` calls of `run` back to back after a barrier.
double time_calls(RankSync& sync, Execution& run, BufferBinding buffers, const Datatype& type,
                  const ReduceOp& op, int calls, bool to_barrier) {
  if (!to_barrier) return slowest_per_call(sync, run, buffers, type, op, calls);
  sync.barrier();
  const auto start = Clock::now();
  for (int i = 0; i < calls; ++i) run.run(sync.transport(), buffers, type, op, sync.options());
  sync.barrier();
  return sync.max(seconds_since(start) / calls);
}

// The median over repetitions of the slowest rank's time per call of `schedule`: after a
// barrier, calls back to back (Timing), so that what is timed is the steady state of ranks
// that keep exchanging, not how late each rank leaves the barrier.
double time_schedule(RankSync& sync, const Schedule& schedule, int repetitions,
                     const Timing& timing = {}) {
  const Rank me = sync.transport().rank();
  const Layout layout = Layout::borrowing(schedule.spec);
  std::vector<std::byte> input(static_cast<std::size_t>(layout.input_count(me)) * kElem);
  std::vector<std::byte> output(static_cast<std::size_t>(layout.output_count(me)) * kElem);
  Execution run(schedule, me);
  const auto type = Datatype::float64();
  const auto op = ReduceOp::builtin("sum", type);
  const BufferBinding buffers{input, output};
  const int calls = std::max(
      timing.min_calls, calls_per_round(sync, run, buffers, type, op, timing.round, kMaxCalls));
  std::vector<double> times;
  for (int rep = 0; rep < repetitions; ++rep) {
    times.push_back(time_calls(sync, run, buffers, type, op, calls, timing.to_barrier));
  }
  return median_of(times);
}

struct Streams {
  std::vector<double> copy_times;    // one rank copying
  std::vector<double> reduce_times;  // one rank reducing
  std::vector<double> throughput;    // [k - 1]: k ranks copying, bytes per second in all
  double reduce_all = 0;             // p ranks reducing at once, seconds
};

Streams measure_streams(RankSync& sync, const NodeCalibrationOptions& o, const ReduceOp& kernel,
                        std::size_t elem_bytes) {
  const Rank p = sync.transport().size();
  const std::size_t bytes = o.stream_bytes / elem_bytes * elem_bytes;
  std::vector<std::byte> src(bytes, std::byte{1});
  std::vector<std::byte> dst(bytes, std::byte{1});
  const auto n = static_cast<Count>(bytes / elem_bytes);
  const auto copy = [&] { std::memcpy(dst.data(), src.data(), bytes); };
  const auto reduce = [&] { reduce_into(kernel, src.data(), dst.data(), n, true); };
  const int reps = std::max(3, o.repetitions / 4);
  Streams s;
  s.copy_times = concurrent(sync, 1, reps, copy);
  s.reduce_times = concurrent(sync, 1, reps, reduce);
  // Up to the cores the ranks share: beyond them copies time-share processors, which the
  // model's `cores` says, not its memory.
  const Rank most = o.cores ? std::min<Rank>(p, *o.cores) : p;
  for (Rank k = 1; k <= most; ++k) {
    const double t = median_of(concurrent(sync, k, reps, copy));
    s.throughput.push_back(static_cast<double>(k) * static_cast<double>(bytes) / t);
  }
  s.reduce_all = median_of(concurrent(sync, p, reps, reduce));
  return s;
}

// The send mode whose prediction of bcast/linear is nearest the measured time.
SendMode choose_send_mode(const Schedule& fan_out, double measured, CostModel& model,
                          const std::vector<SendMode>& modes, ModelCheck& check) {
  SendMode best = modes.front();
  double best_error = 1e300;
  for (const SendMode mode : modes) {
    CostModel m = model;
    m.send_mode = mode;
    const double predicted = predict(fan_out, m);
    const double error = std::abs(std::log(predicted / measured));
    if (error < best_error) {
      best_error = error;
      best = mode;
      check.predicted = predicted;
    }
  }
  check.measured = measured;
  return best;
}

}  // namespace

FittedParameter fit_node_beta(const std::vector<double>& throughput, double copy) {
  FittedParameter best{"node_beta", 0, "", 1e300};
  double best_squares = 1e300;
  for (const double measured : throughput) {
    // The node moves at least what one rank copies alone (its copy rate, measured apart
    // from the curve): a level below it, from a noisy point or ranks that wait for CPUs,
    // would slow even a single copy.
    const double level = std::max(measured, 1 / copy);
    double squares = 0;  // of log(model / measured): one stray point cannot decide
    double error = 0;
    for (std::size_t k = 1; k <= throughput.size(); ++k) {
      const double model = std::min(static_cast<double>(k) / copy, level);
      squares += std::pow(std::log(model / throughput[k - 1]), 2);
      error = std::max(error, relative_error(model, throughput[k - 1]));
    }
    if (squares < best_squares || (squares == best_squares && error < best.error)) {
      best_squares = squares;
      best.value = 1 / level;
      best.error = error;
    }
  }
  best.from =
      fmt::format("1..{} ranks copying at once (peak {:.1f} GB/s in all)", throughput.size(),
                  *std::max_element(throughput.begin(), throughput.end()) * 1e-9);
  return best;
}

FittedParameter fit_nic_ports(const std::vector<double>& times) {
  if (times.empty()) throw_invalid("fitting nic_ports needs the time of one stream at least");
  for (std::size_t k = 1; k <= times.size(); ++k) {
    if (!(times[k - 1] > 0) || !std::isfinite(times[k - 1])) {
      throw_invalid("the time of {} concurrent streams must be positive, got {}", k, times[k - 1]);
    }
  }
  const double one = times.front();
  // The aggregate throughput of k streams in single streams' worth: at most P under either
  // the model's turns or a fairly shared link, and P itself from k = P on.
  double most = 1;
  for (std::size_t k = 1; k <= times.size(); ++k) {
    most = std::max(most, static_cast<double>(k) * one / times[k - 1]);
  }
  const auto streams = static_cast<double>(times.size());
  const int ports = static_cast<int>(std::clamp(std::round(most), 1.0, streams));
  FittedParameter fit{"nic_ports", static_cast<double>(ports), "", 0};
  std::string curve;
  for (std::size_t k = 1; k <= times.size(); ++k) {
    const auto turns = static_cast<double>((k + static_cast<std::size_t>(ports) - 1) /
                                           static_cast<std::size_t>(ports));
    fit.error = std::max(fit.error, relative_error(turns * one, times[k - 1]));
    curve += fmt::format("{}{:.2f}", k == 1 ? "" : ", ", times[k - 1] / one);
  }
  fit.from = fmt::format(
      "k = 1..{} concurrent streams: {} times one stream's {:.1f} us (at most {:.2f} streams' "
      "worth at once{})",
      times.size(), curve, one * 1e6, most,
      ports == static_cast<int>(times.size()) ? "; no more streams were measured" : "");
  return fit;
}

void check_calibration_options(const NodeCalibrationOptions& o) {
  if (o.repetitions < 1) throw_invalid("--repetitions must be at least 1, got {}", o.repetitions);
  if (o.burst < 2) throw_invalid("--burst must be at least 2, got {}", o.burst);
  if (o.stream_bytes < 64) {
    throw_invalid("--kernel-bytes must be at least 64, got {}", o.stream_bytes);
  }
  if (o.timeout.count() < 1)
    throw_invalid("--timeout must be at least 1 ms, got {}", o.timeout.count());
  if (o.send_modes.empty()) throw_invalid("calibration needs at least one send mode to try");
  ping_pong_sizes(o.max_bytes);  // throws for a maximum under 32 bytes
  const auto scalar = parse_datatype(o.dtype);
  if (!scalar) throw_invalid("unknown --dtype '{}' (known: int32, int64, float, double)", o.dtype);
  ReduceOp::builtin(o.op, *scalar);  // throws naming the known operators
}

namespace {

// The send (and receive) gap: the burst's between two ranks, raised where the all-pairs
// exchange needs more: the gap at which the model (everything else fitted) predicts the
// exchange as measured, found by bisection (the prediction grows with the gap), at most the
// whole transfer's time.
std::optional<double> fit_gap(const NodeCalibration& c, CostModel model, Rank p) {
  std::optional<double> gap;
  if (c.send_gap) gap = c.send_gap->gap;
  if (!c.all_pairs || p < kAllPairsMinRanks) return gap;
  const Schedule exchange = all_pairs_exchange(p, 1);
  const auto predicted = [&](double g) {
    model.send_gap = g;
    model.receive_gap = g;
    return predict(exchange, model);
  };
  // A port is never held longer than the whole transfer: a larger gap changes nothing, and
  // an exchange slower than that (ranks that wait for CPUs) is left to the fit error.
  const double most = model.transfer_time(0, 1, 1, kElem);
  double lo = gap.value_or(0.0);
  double hi = std::max(lo, most);
  if (predicted(lo) >= *c.all_pairs) return lo;
  if (predicted(hi) <= *c.all_pairs) return hi;
  for (int i = 0; i < 50 && hi - lo > 1e-3 * hi; ++i) {
    const double mid = (lo + hi) / 2;
    (predicted(mid) < *c.all_pairs ? lo : hi) = mid;
  }
  return hi;
}

}  // namespace

namespace {

// `samples` of the rank that holds them, on every rank (each value: the largest over the
// ranks, where the others hold none).
std::vector<PingPongSample> shared_samples(RankSync& sync, std::span<const std::size_t> sizes,
                                           const std::vector<PingPongSample>& samples) {
  std::vector<PingPongSample> all;
  for (std::size_t k = 0; k < sizes.size(); ++k) {
    all.push_back({sizes[k], sync.max(k < samples.size() ? samples[k].seconds : 0.0)});
  }
  return all;
}

// The ping-pong's description and the line fitted to it.
struct LevelFit {
  std::vector<PingPongSample> samples;
  LinearFit line;
};
LevelFit fit_level(RankSync& sync, Transport& transport, const NodeCalibrationOptions& o,
                   std::pair<Rank, Rank> pair) {
  const auto sizes = ping_pong_sizes(o.max_bytes);
  sync.barrier();
  const auto mine = measure_ping_pong(transport, sizes, o.repetitions, o.timeout, pair);
  LevelFit fit{shared_samples(sync, sizes, mine), {}};
  fit.line = fit_latency_bandwidth(fit.samples, o.fit);
  return fit;
}

// k concurrent streams of `count` doubles, all at once: rank from[i] sends to rank to[i].
Schedule nic_streams(Rank p, std::span<const Rank> from, std::span<const Rank> to, Count count) {
  CollectiveSpec spec = make_spec(CollectiveKind::kAllreduce, p, count);
  spec.elem_bytes = kElem;
  ScheduleBuilder b(spec, "calibrate/nic_streams");
  for (std::size_t i = 0; i < from.size(); ++i) {
    b.transfer(from[i], to[i], Slice{Buf::kInput, 0, count}, Slice{Buf::kOutput, 0, count});
  }
  return std::move(b).finish();
}

// The NIC measurement: streams from the first ranks of one node to the first of another.
struct NicStreams {
  std::int32_t from_node = 0;
  std::int32_t to_node = 0;
  std::size_t bytes = 0;      // each stream's message
  std::vector<double> times;  // [k - 1]: k streams at once, the median time per call
};

// The first two nodes with at least two ranks each (nullopt: there are none).
std::optional<std::pair<std::int32_t, std::int32_t>> stream_nodes(
    const std::vector<std::vector<Rank>>& members) {
  std::vector<std::int32_t> found;
  for (std::size_t n = 0; n < members.size() && found.size() < 2; ++n) {
    if (members[n].size() >= 2) found.push_back(static_cast<std::int32_t>(n));
  }
  if (found.size() < 2) return std::nullopt;
  return std::make_pair(found[0], found[1]);
}

// Collective: k = 1..K streams of the largest size between `nodes` (K = the smaller node's
// ranks, at most kMaxNicStreams), each timed as the schedules above are (calls back to back
// after a barrier, the slowest rank's time per call, the median of the repetitions), in
// rounds of kStreamRoundSeconds and at least kMinStreamCalls calls, each timed to a barrier
// after them: the window in which the node pair moved k streams' calls, however apart the
// senders left the first barrier; several calls, so that a sender that starts late still
// shares the link with the others for most of the round and the time per call is that of
// the nodes' sustained throughput.
constexpr Timing kStreamTiming{20e-3, 4, true};
NicStreams measure_nic_streams(RankSync& sync, const std::vector<std::vector<Rank>>& members,
                               std::pair<std::int32_t, std::int32_t> nodes,
                               const NodeCalibrationOptions& o) {
  const auto& from = members[static_cast<std::size_t>(nodes.first)];
  const auto& to = members[static_cast<std::size_t>(nodes.second)];
  const std::size_t most =
      std::min({from.size(), to.size(), static_cast<std::size_t>(kMaxNicStreams)});
  const Count count = static_cast<Count>(std::max(kElem, o.max_bytes) / kElem);
  NicStreams s{nodes.first, nodes.second, static_cast<std::size_t>(count) * kElem, {}};
  const int repetitions = std::max(3, o.repetitions / 4);
  for (std::size_t k = 1; k <= most; ++k) {
    const Schedule streams = nic_streams(sync.transport().size(), std::span(from).first(k),
                                         std::span(to).first(k), count);
    s.times.push_back(time_schedule(sync, streams, repetitions, kStreamTiming));
  }
  return s;
}

// Rank 0: nic_ports fitted to the streams into the model, or (none measured) why it stays 1.
void record_nic_ports(const std::optional<NicStreams>& streams, NodeCalibration& c) {
  std::erase_if(c.unmeasured, [](const UnmeasuredParameter& u) { return u.name == "nic_ports"; });
  std::erase_if(c.fitted, [](const FittedParameter& f) { return f.name == "nic_ports"; });
  c.nic_streams.clear();
  c.model.nic_ports = 1;
  if (!streams) {
    c.unmeasured.push_back(
        {"nic_ports", 1,
         "no two nodes with 2 ranks each (concurrent streams between two such nodes measure "
         "it)"});
    return;
  }
  FittedParameter fit = fit_nic_ports(streams->times);
  fit.from = fmt::format("{} B from ranks of node {} to ranks of node {}, {}", streams->bytes,
                         streams->from_node, streams->to_node, fit.from);
  c.model.nic_ports = static_cast<int>(fit.value);
  c.nic_streams = streams->times;
  c.fitted.push_back(std::move(fit));
}

// Rank 0: the levels' fitted lines into the model and its fitted list.
void record_levels(const std::optional<std::pair<Rank, Rank>>& intra,
                   const std::optional<LevelFit>& within, std::pair<Rank, Rank> inter,
                   const LevelFit& between, const NodeCalibrationOptions& o, NodeCalibration& c) {
  CostModel& m = c.model;
  const auto drop = [&](std::string_view name) {
    std::erase_if(c.fitted, [&](const FittedParameter& f) { return f.name == name; });
  };
  if (within) {
    m.alpha = within->line.intercept;
    m.beta = within->line.slope;
    drop("alpha");
    drop("beta");
    c.fitted.insert(c.fitted.begin(),
                    {{"alpha", m.alpha,
                      fmt::format("ping-pong of ranks {} and {} (one node) at {} B", intra->first,
                                  intra->second, within->samples.front().bytes),
                      within->line.max_relative_error},
                     {"beta", m.beta,
                      fmt::format("ping-pong of ranks {} and {} (one node) up to {} B",
                                  intra->first, intra->second, o.max_bytes),
                      within->line.max_relative_error}});
  }
  drop("inter_alpha");
  drop("inter_beta");
  m.inter_alpha = between.line.intercept;
  m.inter_beta = between.line.slope;
  c.fitted.push_back({"inter_alpha", *m.inter_alpha,
                      fmt::format("ping-pong of ranks {} and {} (two nodes) at {} B", inter.first,
                                  inter.second, between.samples.front().bytes),
                      between.line.max_relative_error});
  c.fitted.push_back({"inter_beta", *m.inter_beta,
                      fmt::format("ping-pong of ranks {} and {} (two nodes) up to {} B",
                                  inter.first, inter.second, o.max_bytes),
                      between.line.max_relative_error});
  drop("node_beta");
  m.node_beta.reset();
  // The job's processors stay where the ranks outnumber them: elsewhere each rank has one.
  if (m.cores && *m.cores >= c.ranks) m.cores.reset();
}

}  // namespace

void calibrate_levels(Transport& transport, const Placement& placement,
                      const NodeCalibrationOptions& o, NodeCalibration& c) {
  validate_for(placement, transport.size());
  const auto members = placement.members();
  if (members.size() < 2) return;
  // Epochs from 3 * 2^30 on: calibrate_node's synchronization used those from 2^31.
  RankSync sync(transport, o.timeout, std::uint32_t{3} << 30);
  std::optional<std::pair<Rank, Rank>> intra;
  for (const auto& node : members) {
    if (node.size() >= 2) {
      intra = std::make_pair(node[0], node[1]);
      break;
    }
  }
  const std::pair<Rank, Rank> inter{members[0][0], members[1][0]};
  std::optional<LevelFit> within;
  if (intra) within = fit_level(sync, transport, o, *intra);
  const LevelFit between = fit_level(sync, transport, o, inter);
  std::optional<NicStreams> streams;
  if (const auto nodes = stream_nodes(members)) {
    streams = measure_nic_streams(sync, members, *nodes, o);
  }
  sync.barrier();
  if (transport.rank() != 0) return;
  record_levels(intra, within, inter, between, o, c);
  record_nic_ports(streams, c);
  CostModel& m = c.model;
  m.placement = placement;
  validate_for(m, transport.size());
  // The ring exchange (every rank busy, messages within and between nodes) as the two
  // levels predict it: a check none of the measurements above was fitted to.
  for (const PingPongSample& e : c.exchange) {
    const Count count = static_cast<Count>(std::max(kElem, e.bytes) / kElem);
    c.checks.push_back(
        {fmt::format("ring exchange step of {} B over the {} nodes", e.bytes, members.size()),
         e.seconds, predict(ring_exchange(transport.size(), count), m)});
  }
}

namespace {

// What calibrate_node measures beyond NodeCalibration's own records.
struct NodeMeasurements {
  Datatype scalar;
  Streams streams;
  Schedule fan_out;  // bcast/linear of the largest size to every rank
  double fan_out_time = 0;
};

// The exchange step of `bytes` (every rank at once), as measure_node times it.
PingPongSample exchange_step(RankSync& sync, std::size_t bytes, int repetitions) {
  const Rank p = sync.transport().size();
  const Schedule step = ring_exchange(p, static_cast<Count>(std::max(kElem, bytes) / kElem));
  return {bytes, time_schedule(sync, step, repetitions)};
}

// Collective (every rank gets the same times, so every rank takes the same branches): the
// exchange step at doubling sizes from kHandshakeSearchFrom below own_protocol_from (and up
// to max_bytes), then kBisections halvings of the bracket of its protocol jump, if any:
// a size whose step rose by more than half the jump is past it.
std::optional<HandshakeJump> measure_handshake(RankSync& sync, const NodeCalibrationOptions& o,
                                               std::vector<PingPongSample>& steps) {
  constexpr int kBisections = 5;
  const std::size_t end = std::min(o.own_protocol_from.value_or(SIZE_MAX), o.max_bytes + 1);
  for (std::size_t bytes = kHandshakeSearchFrom; bytes < end; bytes *= 2) {
    steps.push_back(exchange_step(sync, bytes, o.repetitions));
  }
  const std::optional<std::size_t> jump = find_protocol_jump(steps);
  if (!jump) return std::nullopt;
  HandshakeJump found{steps[*jump], steps[*jump + 1]};
  for (int k = 0; k < kBisections && found.waited.bytes - found.eager.bytes > kElem; ++k) {
    const std::size_t middle = (found.eager.bytes + found.waited.bytes) / 2 / kElem * kElem;
    if (middle <= found.eager.bytes) break;
    const PingPongSample sample = exchange_step(sync, middle, o.repetitions);
    steps.push_back(sample);
    const double half_jump = (found.waited.seconds - found.eager.seconds) / 2;
    (sample.seconds - found.eager.seconds > half_jump ? found.waited : found.eager) = sample;
  }
  return found;
}

// The measurements (collective): into `c` what it records, the rest returned.
NodeMeasurements measure_node(Transport& transport, const NodeCalibrationOptions& o,
                              NodeCalibration& c) {
  const auto start = Clock::now();
  const Rank p = transport.size();
  // Epochs from 2^31 on: the ping-pong and the send gap use their own below.
  RankSync sync(transport, o.timeout, std::uint32_t{1} << 31);
  c.ranks = p;
  const auto sizes = ping_pong_sizes(o.max_bytes);
  // Ranks 0 and 1 alone (the others wait at the barrier after).
  c.ping_pong = measure_ping_pong(transport, sizes, o.repetitions, o.timeout);
  c.send_gap = measure_send_gap(transport, kSendGapBytes, o.burst, o.repetitions, o.timeout);
  sync.barrier();
  // Every rank at once.
  for (const std::size_t bytes : sizes) {
    const Schedule step = ring_exchange(p, static_cast<Count>(std::max(kElem, bytes) / kElem));
    c.exchange.push_back({bytes, time_schedule(sync, step, o.repetitions)});
  }
  if (p >= kAllPairsMinRanks) {
    c.all_pairs = time_schedule(sync, all_pairs_exchange(p, 1), o.repetitions);
  }
  if (o.find_handshake) c.handshake = measure_handshake(sync, o, c.handshake_steps);
  const Datatype scalar = *parse_datatype(o.dtype);
  NodeMeasurements n{
      scalar, measure_streams(sync, o, ReduceOp::builtin(o.op, scalar), scalar.bytes), {}, 0};
  CollectiveSpec spec =
      make_spec(CollectiveKind::kBcast, p, static_cast<Count>(o.max_bytes / kElem));
  spec.elem_bytes = kElem;
  n.fan_out = algorithms::build("bcast/linear", spec);
  n.fan_out_time = time_schedule(sync, n.fan_out, std::max(3, o.repetitions / 4));
  if (transport.rank() == 0) c.kernels = measure_reduce_kernels(o.stream_bytes, 3);
  c.copy_throughput = n.streams.throughput;
  c.seconds = sync.max(seconds_since(start));
  return n;
}

// The elements of the copy and reduction timings' buffer, as bytes.
double stream_bytes(const NodeCalibrationOptions& o, const Datatype& scalar) {
  return static_cast<double>(o.stream_bytes / scalar.bytes * scalar.bytes);
}

// The model fitted to the measurements (rank 0), with the fan-out's check and the send gap.
struct ModelFit {
  LinearFit line;             // the ping-pong's
  FittedParameter node_beta;  // its fit
  std::optional<double> gap;  // the send (and receive) gap, where fitted
  ModelCheck fan;             // the fan-out measured and predicted under the chosen mode
};
ModelFit fit_model(NodeCalibration& c, const NodeMeasurements& n, const NodeCalibrationOptions& o) {
  const Rank p = c.ranks;
  ModelFit fit{fit_latency_bandwidth(c.ping_pong, o.fit),
               {},
               std::nullopt,
               {fmt::format("bcast/linear of {} B to {} ranks", o.max_bytes, p - 1)}};
  const double stream = stream_bytes(o, n.scalar);
  CostModel& m = c.model;
  m.per_byte = true;
  m.beta = fit.line.slope;
  m.copy = median_of(n.streams.copy_times) / stream;
  m.gamma = median_of(n.streams.reduce_times) / stream;
  m.cores = o.cores;
  fit.node_beta = fit_node_beta(n.streams.throughput, m.copy);
  m.node_beta = fit.node_beta.value;
  const PingPongSample& smallest = c.exchange.front();
  m.alpha = std::max(0.0, smallest.seconds - m.beta * static_cast<double>(smallest.bytes));
  fit.gap = fit_gap(c, m, p);
  if (fit.gap) {
    m.send_gap = *fit.gap;
    m.receive_gap = *fit.gap;
  }
  if (c.handshake) {
    const HandshakeJump& h = *c.handshake;
    m.rendezvous_bytes = h.eager.bytes;
    m.rendezvous_alpha =
        std::max(0.0, h.waited.seconds - h.eager.seconds -
                          m.beta * static_cast<double>(h.waited.bytes - h.eager.bytes));
    m.rendezvous_max_bytes = o.own_protocol_from;
  }
  m.folds_copies = true;  // every executor does (Execution::fold_copies)
  m.helped_bytes = o.helped_bytes;
  m.combines_in_place = o.combines_in_place;
  m.send_mode_min_bytes = o.send_mode_min_bytes;
  m.send_mode = choose_send_mode(n.fan_out, n.fan_out_time, m, o.send_modes, fit.fan);
  validate(m);
  return fit;
}

// The handshake's parameters as fitted (with the step just past the jump as their check),
// or why there are none (rank 0).
void report_handshake(NodeCalibration& c, const NodeCalibrationOptions& o) {
  if (!o.find_handshake) return;
  const CostModel& m = c.model;
  const Rank p = c.ranks;
  if (!c.handshake) {
    const std::size_t last = c.handshake_steps.empty() ? 0 : c.handshake_steps.back().bytes;
    c.unmeasured.push_back(
        {"rendezvous_bytes", 0,
         fmt::format("no jump of the exchange step from {} B to {} B: every size there went by "
                     "one protocol (or a handshake cheaper than a small message)",
                     kHandshakeSearchFrom, last)});
    return;
  }
  const HandshakeJump& h = *c.handshake;
  const std::string steps =
      fmt::format("the exchange step with all {} ranks busy: {:.3f} us at {} B, {:.3f} us at {} B",
                  p, h.eager.seconds * 1e6, h.eager.bytes, h.waited.seconds * 1e6, h.waited.bytes);
  const double predicted =
      predict(ring_exchange(p, static_cast<Count>(std::max(kElem, h.waited.bytes) / kElem)), m);
  c.fitted.push_back({"rendezvous_bytes", static_cast<double>(h.eager.bytes), steps, 0});
  c.fitted.push_back(
      {"rendezvous_alpha", m.rendezvous_alpha, steps, relative_error(predicted, h.waited.seconds)});
  c.checks.push_back({fmt::format("ring exchange step of {} B (past the handshake), {} ranks "
                                  "at once",
                                  h.waited.bytes, p),
                      h.waited.seconds, predicted});
}

// Each fitted parameter with what it was fitted to and its fit error, and the checks against
// measurements it was not fitted to (rank 0).
void report_fit(NodeCalibration& c, const NodeMeasurements& n, const NodeCalibrationOptions& o,
                const ModelFit& fit) {
  const Rank p = c.ranks;
  const CostModel& m = c.model;
  double alpha_error = 0;
  for (const auto& e : c.exchange) {
    const double predicted =
        predict(ring_exchange(p, static_cast<Count>(std::max(kElem, e.bytes) / kElem)), m);
    if (e.bytes <= 4096) alpha_error = std::max(alpha_error, relative_error(predicted, e.seconds));
    c.checks.push_back({fmt::format("ring exchange step of {} B, {} ranks at once", e.bytes, p),
                        e.seconds, predicted});
  }
  const auto kernel_count =
      static_cast<Count>(stream_bytes(o, n.scalar) / static_cast<double>(n.scalar.bytes));
  c.checks.push_back(fit.fan);
  c.checks.push_back({fmt::format("{} ranks reducing {} B each at once", p, o.stream_bytes),
                      n.streams.reduce_all,
                      predict(local_work(p, p, kernel_count, n.scalar.bytes, true), m)});
  const auto& ping = c.ping_pong;
  const PingPongSample& smallest = c.exchange.front();
  c.fitted = {
      {"alpha", m.alpha,
       fmt::format("a ring exchange step of {} B with all {} ranks busy ({:.3f} us; an idle "
                   "ping-pong: {:.3f} us)",
                   smallest.bytes, p, smallest.seconds * 1e6, ping.front().seconds * 1e6),
       alpha_error},
      {"beta", m.beta, fmt::format("ping-pong of ranks 0 and 1 up to {} B", o.max_bytes),
       fit.line.max_relative_error},
      {"copy", m.copy, fmt::format("memcpy of {} B by one rank", o.stream_bytes),
       spread(n.streams.copy_times)},
      {"gamma", m.gamma, fmt::format("{} {} of {} B by one rank", o.dtype, o.op, o.stream_bytes),
       spread(n.streams.reduce_times)},
      fit.node_beta,
  };
  if (fit.gap) {
    const std::string burst =
        c.send_gap ? fmt::format("a burst of {} sends of {} B against one: {:.3f} us",
                                 c.send_gap->burst, c.send_gap->bytes, c.send_gap->gap * 1e6)
                   : std::string("no burst measured");
    if (c.all_pairs) {
      const double predicted = predict(all_pairs_exchange(p, 1), m);
      c.checks.push_back({fmt::format("exchange of 8 B between every pair of {} ranks", p),
                          *c.all_pairs, predicted});
      c.fitted.push_back(
          {"send_gap", *fit.gap,
           fmt::format("an exchange of 8 B between every pair of the {} ranks at once ({:.3f} "
                       "us), also the receive gap ({})",
                       p, *c.all_pairs * 1e6, burst),
           relative_error(predicted, *c.all_pairs)});
    } else {
      c.fitted.push_back({"send_gap", *fit.gap, burst + ", also the receive gap", 0});
    }
  }
  report_handshake(c, o);
  c.fitted.push_back({"send_mode", static_cast<double>(m.send_mode),
                      fmt::format("bcast/linear of {} B, predicted under each mode", o.max_bytes),
                      relative_error(fit.fan.predicted, fit.fan.measured)});
}

}  // namespace

std::optional<std::size_t> find_protocol_jump(std::span<const PingPongSample> steps) {
  std::optional<std::size_t> jump;
  double largest = 0;
  double before = 0;  // the most any step up to i took
  for (std::size_t i = 0; i + 1 < steps.size(); ++i) {
    before = std::max(before, steps[i].seconds);
    double after = steps[i + 1].seconds;  // the least any step after i took
    for (std::size_t j = i + 2; j < steps.size(); ++j) after = std::min(after, steps[j].seconds);
    const double excess = after - 2 * before;
    if (excess > largest) {
      largest = excess;
      jump = i;
    }
  }
  return jump;
}

NodeCalibration calibrate_node(Transport& transport, const NodeCalibrationOptions& o) {
  check_calibration_options(o);
  if (transport.size() < 2) {
    throw_invalid("calibration needs at least 2 ranks, got {}", transport.size());
  }
  NodeCalibration c;
  const NodeMeasurements n = measure_node(transport, o, c);
  if (transport.rank() != 0) return c;
  const ModelFit fit = fit_model(c, n, o);
  report_fit(c, n, o, fit);
  // One node as far as calibrate_node knows: calibrate_levels replaces this over several.
  c.unmeasured.push_back(
      {"nic_ports", static_cast<double>(c.model.nic_ports),
       "one node: no message crosses a NIC (calibrate on several nodes measures it)"});
  return c;
}

}  // namespace optcoll
