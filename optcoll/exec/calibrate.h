// SPDX-License-Identifier: Apache-2.0
// File: measurements on a Transport that calibration (optcoll/api/calibrate_node.h, `optcoll
// calibrate`) is made of:
//
//   ping-pong     between ranks 0 and 1 over message sizes from 8 B to a maximum (powers of
//                 4), one-way time = median round trip / 2, and a line t(m) = alpha + beta·m
//                 fitted one of two ways (FitKind);
//   kernels       each built-in reduction kernel (int32, int64, float, double x sum, prod,
//                 min, max) over a buffer, per byte;
//   send gap      a burst of small sends against a single one (measure_send_gap).
// Measurements are medians over repetitions.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "optcoll/exec/transport.h"
#include "optcoll/model/cost_model.h"

namespace optcoll {

struct PingPongSample {
  std::size_t bytes = 0;
  double seconds = 0;  // one way
};

struct LinearFit {
  double intercept = 0;           // alpha, seconds
  double slope = 0;               // beta, seconds per byte
  double max_relative_error = 0;  // largest |fit - sample| / sample over the samples
};

struct KernelRate {
  std::string dtype;  // "int32", ...
  std::string op;     // "sum", ...
  double seconds_per_byte = 0;
};

// 8, 32, 128, ... up to max_bytes (and max_bytes itself). Error(kInvalidArgument) unless
// max_bytes >= 32 (two sizes at least).
std::vector<std::size_t> ping_pong_sizes(std::size_t max_bytes);

// Collective over `transport` (size >= 2): ranks `pair.first` and `pair.second` (0 and 1 by
// default; distinct ranks of the transport) ping-pong every size `repetitions` times after
// one warm-up; other ranks return at once. Returns the samples on pair.first (empty
// elsewhere). TransportError if the peer does not answer within `timeout`.
std::vector<PingPongSample> measure_ping_pong(Transport& transport,
                                              std::span<const std::size_t> sizes, int repetitions,
                                              std::chrono::milliseconds timeout,
                                              std::pair<Rank, Rank> pair = {0, 1});

// The send gap (CostModel::send_gap, LogGP's g): how soon a rank can start its next small
// send. Ranks 0 and 1 alternate two timings, `repetitions` times each after a warm-up: a
// round trip of one `bytes` message each way, and a round trip where rank 0 sends `burst`
// messages back to back (all posted before any is waited for) and rank 1 answers once all
// arrived. gap = (median burst round trip - median single round trip) / (burst - 1),
// clamped to [0, one-way latency]. One receiver takes the whole burst, so its own
// per-message cost is included: the gap is measured from above, never below. The burst's
// per-message time is that of the slower end, so it bounds the receive gap
// (CostModel::receive_gap, LogGP's g at the receiver) from above too: `optcoll calibrate`
// writes it as both. Result on
// rank 0 (other ranks get nullopt). Error(kInvalidArgument) for burst < 2, repetitions < 1
// or fewer than two ranks; TransportError if the peer does not answer within `timeout`.
inline constexpr std::size_t kSendGapBytes = 8;  // the message size `optcoll calibrate` uses
struct SendGapSample {
  std::size_t bytes = 0;
  int burst = 0;
  double single_round_trip = 0;  // seconds, median
  double burst_round_trip = 0;   // seconds, median
  double gap = 0;                // seconds
};
std::optional<SendGapSample> measure_send_gap(Transport& transport, std::size_t bytes, int burst,
                                              int repetitions, std::chrono::milliseconds timeout);

// kAsymptotic (Hockney's way): beta = the least-squares slope over the large messages (sizes
//   >= the largest / 64, at least the two largest sizes), alpha = t - beta·m at the smallest
//   size (8 B: the latency). Exact at both ends whatever the
//   curve does in between (eager/rendezvous switches, TCP windows), which a network with
//   such bends needs: on the emulated cluster's 100 Mbit/s links the relative fit put beta
//   at 1/70 of the measured one.
// kRelative: weighted least squares with weights 1/t², minimizing the relative error over
//   all sizes alike; the better line when the curve is close to straight.
enum class FitKind : std::uint8_t { kAsymptotic, kRelative };

// Error(kInvalidArgument) for fewer than two distinct sizes or non-positive times. A
// negative intercept or slope (noise) is clamped to 0.
LinearFit fit_latency_bandwidth(std::span<const PingPongSample> samples,
                                FitKind kind = FitKind::kAsymptotic);
// "asymptotic" or "relative"; Error(kInvalidArgument) naming the known ones otherwise.
FitKind parse_fit_kind(std::string_view name);

std::vector<KernelRate> measure_reduce_kernels(std::size_t bytes, int repetitions);

}  // namespace optcoll
