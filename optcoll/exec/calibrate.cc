// SPDX-License-Identifier: Apache-2.0
// File: measuring this machine's cost-model parameters (calibrate.h).
#include "optcoll/exec/calibrate.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "optcoll/exec/reduce_kernels.h"
#include "optcoll/model/error.h"

namespace optcoll {
namespace {

using Clock = std::chrono::steady_clock;

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

void wait_for(Transport& transport, std::vector<RequestId> ids, std::chrono::milliseconds timeout,
              std::size_t bytes) {
  while (!ids.empty()) {
    const auto done = transport.wait_some(timeout);
    if (done.empty()) {
      throw TransportError(
          fmt::format("rank {}: ping-pong of {} bytes: no answer from rank {} "
                      "within {} ms",
                      transport.rank(), bytes, 1 - transport.rank(), timeout.count()));
    }
    for (const RequestId id : done) std::erase(ids, id);
  }
}

}  // namespace

std::vector<std::size_t> ping_pong_sizes(std::size_t max_bytes) {
  if (max_bytes < 32) {
    throw_invalid("the largest ping-pong message must be at least 32 bytes (two sizes), got {}",
                  max_bytes);
  }
  std::vector<std::size_t> sizes;
  for (std::size_t m = 8; m < max_bytes; m *= 4) sizes.push_back(m);
  sizes.push_back(max_bytes);
  return sizes;
}

std::vector<PingPongSample> measure_ping_pong(Transport& transport,
                                              std::span<const std::size_t> sizes, int repetitions,
                                              std::chrono::milliseconds timeout,
                                              std::pair<Rank, Rank> pair) {
  if (repetitions < 1) throw_invalid("repetitions must be at least 1, got {}", repetitions);
  if (transport.size() < 2) {
    throw_invalid("a ping-pong needs two ranks, the transport has {}", transport.size());
  }
  const auto [first, second] = pair;
  if (first == second || first < 0 || second < 0 || first >= transport.size() ||
      second >= transport.size()) {
    throw_invalid("a ping-pong needs two distinct ranks from 0 to {}, got {} and {}",
                  transport.size() - 1, first, second);
  }
  const Rank me = transport.rank();
  std::vector<PingPongSample> samples;
  if (me != first && me != second) return samples;
  const Rank peer = me == first ? second : first;
  std::uint32_t epoch = 0;
  for (const std::size_t bytes : sizes) {
    std::vector<std::byte> out(bytes, std::byte{0x5A});
    std::vector<std::byte> in(bytes);
    std::vector<double> round_trips;
    for (int rep = 0; rep <= repetitions; ++rep) {  // rep 0 warms up
      const MsgKey key{++epoch, 0};
      const auto start = Clock::now();
      if (me == first) {
        wait_for(transport, {transport.isend(peer, key, out)}, timeout, bytes);
        wait_for(transport, {transport.irecv(peer, key, in)}, timeout, bytes);
      } else {
        wait_for(transport, {transport.irecv(peer, key, in)}, timeout, bytes);
        wait_for(transport, {transport.isend(peer, key, out)}, timeout, bytes);
      }
      const std::chrono::duration<double> took = Clock::now() - start;
      if (rep > 0) round_trips.push_back(took.count());
    }
    if (me == first) samples.push_back({bytes, median(round_trips) / 2});
  }
  return samples;
}

std::optional<SendGapSample> measure_send_gap(Transport& transport, std::size_t bytes, int burst,
                                              int repetitions, std::chrono::milliseconds timeout) {
  if (burst < 2) throw_invalid("a send-gap burst needs at least 2 messages, got {}", burst);
  if (repetitions < 1) throw_invalid("repetitions must be at least 1, got {}", repetitions);
  if (transport.size() < 2) {
    throw_invalid("a send-gap burst needs two ranks, the transport has {}", transport.size());
  }
  const Rank me = transport.rank();
  if (me > 1) return std::nullopt;
  const Rank peer = 1 - me;
  const auto n = static_cast<std::size_t>(burst);
  std::vector<std::byte> out(n * bytes, std::byte{0x3C});
  std::vector<std::byte> in(n * bytes);
  std::vector<double> single;
  std::vector<double> bursts;
  // Epochs far from the ping-pong's, so a late message of one can never match the other.
  std::uint32_t epoch = 1u << 30;
  for (int rep = 0; rep <= repetitions; ++rep) {  // rep 0 warms up
    for (const std::size_t messages : {std::size_t{1}, n}) {
      const std::uint32_t key_epoch = ++epoch;
      const auto start = Clock::now();
      std::vector<RequestId> ids;
      if (me == 0) {
        for (std::size_t k = 0; k < messages; ++k) {
          ids.push_back(transport.isend(peer, MsgKey{key_epoch, static_cast<std::int32_t>(k)},
                                        std::span<const std::byte>(out).subspan(k * bytes, bytes)));
        }
        wait_for(transport, std::move(ids), timeout, bytes);
        wait_for(transport,
                 {transport.irecv(peer, MsgKey{key_epoch, 0},
                                  std::span<std::byte>(in).subspan(0, bytes))},
                 timeout, bytes);
      } else {
        for (std::size_t k = 0; k < messages; ++k) {
          ids.push_back(transport.irecv(peer, MsgKey{key_epoch, static_cast<std::int32_t>(k)},
                                        std::span<std::byte>(in).subspan(k * bytes, bytes)));
        }
        wait_for(transport, std::move(ids), timeout, bytes);
        wait_for(transport,
                 {transport.isend(peer, MsgKey{key_epoch, 0},
                                  std::span<const std::byte>(out).subspan(0, bytes))},
                 timeout, bytes);
      }
      const std::chrono::duration<double> took = Clock::now() - start;
      if (rep > 0) (messages == 1 ? single : bursts).push_back(took.count());
    }
  }
  if (me != 0) return std::nullopt;
  SendGapSample sample;
  sample.bytes = bytes;
  sample.burst = burst;
  sample.single_round_trip = median(single);
  sample.burst_round_trip = median(bursts);
  const double gap =
      (sample.burst_round_trip - sample.single_round_trip) / static_cast<double>(burst - 1);
  sample.gap = std::clamp(gap, 0.0, sample.single_round_trip / 2);
  return sample;
}

namespace {

// Weighted least squares over `samples` (weights 1/t² when relative, else 1).
LinearFit least_squares(std::span<const PingPongSample> samples, bool relative) {
  double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const auto& s : samples) {
    const double w = relative ? 1 / (s.seconds * s.seconds) : 1.0;
    const auto x = static_cast<double>(s.bytes);
    sw += w;
    sx += w * x;
    sy += w * s.seconds;
    sxx += w * x * x;
    sxy += w * x * s.seconds;
  }
  const double det = sw * sxx - sx * sx;
  if (samples.size() < 2 || !(std::abs(det) > 0)) {
    throw_invalid("fitting alpha and beta needs ping-pong times for two different sizes at least");
  }
  LinearFit fit;
  fit.slope = std::max(0.0, (sw * sxy - sx * sy) / det);
  fit.intercept = std::max(0.0, (sy - fit.slope * sx) / sw);
  return fit;
}

LinearFit asymptotic_fit(std::span<const PingPongSample> samples) {
  std::vector<PingPongSample> sorted(samples.begin(), samples.end());
  std::sort(sorted.begin(), sorted.end(),
            [](const PingPongSample& a, const PingPongSample& b) { return a.bytes < b.bytes; });
  const std::size_t largest = sorted.back().bytes;
  std::vector<PingPongSample> large;
  for (const auto& s : sorted) {
    if (s.bytes >= largest / 64) large.push_back(s);
  }
  // At least the two largest distinct sizes.
  if (large.front().bytes == largest) {
    const auto next = std::find_if(sorted.rbegin(), sorted.rend(),
                                   [&](const PingPongSample& s) { return s.bytes < largest; });
    if (next != sorted.rend()) large.push_back(*next);
  }
  LinearFit fit = least_squares(large, false);
  const PingPongSample& smallest = sorted.front();
  fit.intercept = std::max(0.0, smallest.seconds - fit.slope * static_cast<double>(smallest.bytes));
  return fit;
}

}  // namespace

LinearFit fit_latency_bandwidth(std::span<const PingPongSample> samples, FitKind kind) {
  for (const auto& s : samples) {
    if (!(s.seconds > 0)) throw_invalid("a ping-pong time must be positive, got {}", s.seconds);
  }
  if (samples.empty()) {
    throw_invalid("fitting alpha and beta needs ping-pong times for two different sizes at least");
  }
  LinearFit fit =
      kind == FitKind::kRelative ? least_squares(samples, true) : asymptotic_fit(samples);
  for (const auto& s : samples) {
    const double predicted = fit.intercept + fit.slope * static_cast<double>(s.bytes);
    fit.max_relative_error =
        std::max(fit.max_relative_error, std::abs(predicted - s.seconds) / s.seconds);
  }
  return fit;
}

FitKind parse_fit_kind(std::string_view name) {
  if (name == "asymptotic") return FitKind::kAsymptotic;
  if (name == "relative") return FitKind::kRelative;
  throw_invalid("unknown fit '{}' (known: asymptotic, relative)", name);
}

std::vector<KernelRate> measure_reduce_kernels(std::size_t bytes, int repetitions) {
  if (repetitions < 1) throw_invalid("repetitions must be at least 1, got {}", repetitions);
  std::vector<KernelRate> rates;
  std::vector<std::byte> src(bytes), dst(bytes);
  for (std::size_t i = 0; i < bytes; ++i) src[i] = static_cast<std::byte>(i * 7 + 1);
  for (const auto& type :
       {Datatype::int32(), Datatype::int64(), Datatype::float32(), Datatype::float64()}) {
    for (const char* name : {"sum", "prod", "min", "max"}) {
      const ReduceOp op = ReduceOp::builtin(name, type);
      const auto n = static_cast<Count>(bytes / type.bytes);
      std::vector<double> times;
      for (int rep = 0; rep <= repetitions; ++rep) {
        std::memset(dst.data(), 1, bytes);  // products of ones stay finite
        const auto start = Clock::now();
        reduce_into(op, src.data(), dst.data(), n, /*src_on_left=*/true);
        const std::chrono::duration<double> took = Clock::now() - start;
        if (rep > 0) times.push_back(took.count());
      }
      rates.push_back({type.name, name, median(times) / static_cast<double>(bytes)});
    }
  }
  return rates;
}

}  // namespace optcoll
