// SPDX-License-Identifier: Apache-2.0
// File: `optcoll calibrate`: measures alpha and beta (ping-pong between two ranks of the
// chosen backend, fitted), the send gap (a burst of small sends against a single one),
// gamma per built-in kernel and the local copy cost on this
// machine, prints them beside the fit, and writes the per-byte model as model.json for
// `--model` (CLI) or OPTCOLL_Set_model / $OPTCOLL_MODEL (C API, PMPI library).
//
//   optcoll calibrate --backend threads --out model.json
//   mpirun -np 2 optcoll calibrate --backend mpi --out model.json
#include "optcoll/exec/calibrate.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands/commands.h"
#include "cli/commands/run_mpi.h"
#include "cli/options.h"
#include "optcoll/exec/threads/world.h"
#include "optcoll/model/error.h"

namespace optcoll::cli {
namespace {

struct CalibrateOptions {
  std::string backend = "threads";
  std::string out;
  std::size_t max_bytes = std::size_t{4} << 20;
  std::size_t kernel_bytes = std::size_t{32} << 20;
  int repetitions = 20;
  int burst = 16;
  std::string dtype = "double";
  std::string op = "sum";
  std::string fit = "asymptotic";
  int timeout_ms = 30000;
  bool json = false;
};

// Whether a file can be written at `path`: an existing file we may write, or a new one in a
// directory we may write into (asked of the file system, which is left as it is).
bool can_write(const std::string& path) {
  const std::filesystem::path file(path);
  std::error_code ec;
  if (std::filesystem::is_directory(file, ec)) return false;
  if (std::filesystem::exists(file, ec)) return ::access(path.c_str(), W_OK) == 0;
  const auto dir = file.has_parent_path() ? file.parent_path() : std::filesystem::path(".");
  return std::filesystem::is_directory(dir, ec) && ::access(dir.c_str(), W_OK | X_OK) == 0;
}

// Before measuring (minutes on a slow network): the kernel that sets gamma exists, and the
// model file can be written.
void check_before_measuring(const CalibrateOptions& o) {
  const bool kernel = parse_datatype(o.dtype).has_value() &&
                      (o.op == "sum" || o.op == "prod" || o.op == "min" || o.op == "max");
  if (!kernel) {
    throw_invalid(
        "no measured reduction kernel for --dtype {} --op {} (measured: int32, int64, "
        "float, double x sum, prod, min, max)",
        o.dtype, o.op);
  }
  if (!o.out.empty() && !can_write(o.out)) throw_invalid("cannot write the model to '{}'", o.out);
}

void run_calibrate(const CalibrateOptions& o) {
  check_before_measuring(o);
  const bool mpi = o.backend == "mpi";
  if (!mpi && o.backend != "threads") {
    throw_invalid("unknown --backend '{}' (known: threads, mpi)", o.backend);
  }
  if (o.repetitions < 1) throw_invalid("--repetitions must be at least 1, got {}", o.repetitions);
  if (o.burst < 2) throw_invalid("--burst must be at least 2, got {}", o.burst);
  if (o.timeout_ms < 1) throw_invalid("--timeout must be at least 1 ms, got {}", o.timeout_ms);
  if (o.kernel_bytes < 64) {
    throw_invalid("--kernel-bytes must be at least 64, got {}", o.kernel_bytes);
  }
  const FitKind fit_kind = parse_fit_kind(o.fit);
  const auto sizes = ping_pong_sizes(o.max_bytes);
  const std::chrono::milliseconds timeout(o.timeout_ms);
  std::vector<PingPongSample> samples;
  std::optional<std::size_t> shared_send_min_bytes;
  std::optional<SendGapSample> send_gap;
  std::optional<int> cores;
  bool speaker = true;
  Rank ranks = 2;  // the thread backend measures on a world of two
  if (mpi) {
    ensure_mpi_initialized();
    auto measured = ping_pong_on_mpi(sizes, o.repetitions, o.burst, timeout);
    samples = std::move(measured.samples);
    shared_send_min_bytes = measured.shared_send_min_bytes;
    send_gap = measured.send_gap;
    cores = measured.node_cores;
    speaker = mpi_world_rank() == 0;
    ranks = mpi_world_size();
  } else {
    if (allowed_processors() > 0) cores = allowed_processors();  // a world's threads share them
    ThreadWorld world(2, WorldOptions{timeout});
    world.run([&](Transport& transport) {
      auto mine = measure_ping_pong(transport, sizes, o.repetitions, timeout);
      auto gap = measure_send_gap(transport, kSendGapBytes, o.burst, o.repetitions, timeout);
      if (transport.rank() == 0) {
        samples = std::move(mine);
        send_gap = gap;
      }
    });
  }
  if (!speaker) return;
  const LinearFit fit = fit_latency_bandwidth(samples, fit_kind);
  const auto kernels = measure_reduce_kernels(o.kernel_bytes, std::max(3, o.repetitions / 4));
  const double copy = measure_copy_per_byte(o.kernel_bytes, std::max(3, o.repetitions / 4));
  CostModel model = calibrated_model(fit, kernels, o.dtype, o.op, copy);
  model.shared_send_min_bytes = shared_send_min_bytes;
  if (send_gap) {
    // The burst runs at the pace of its slower end: an upper bound on both ends' gaps.
    model.send_gap = send_gap->gap;
    model.receive_gap = send_gap->gap;
  }
  // All ranks on one node share its processors: the simulator slows what is in progress
  // while more ranks are busy than there are cores (design.md 39).
  model.cores = cores;
  // With more ranks than cores the idle ranks' polling is part of what the ping-pong
  // measures: the file says how many ran, and `optcoll bench` notes a run with another count.
  nlohmann::json model_doc = nlohmann::json::parse(cost_model_to_json(model));
  model_doc["calibrated_ranks"] = ranks;
  const std::string model_json = model_doc.dump(2);
  if (!o.out.empty()) {
    std::ofstream file(o.out);
    if (!(file << model_json << "\n")) throw_invalid("cannot write the model to '{}'", o.out);
  }
  if (o.json) {
    nlohmann::json out = {{"backend", o.backend},
                          {"model", nlohmann::json::parse(model_json)},
                          {"fit_max_relative_error", fit.max_relative_error}};
    if (send_gap) {
      out["send_gap_burst"] = {{"bytes", send_gap->bytes},
                               {"burst", send_gap->burst},
                               {"single_round_trip", send_gap->single_round_trip},
                               {"burst_round_trip", send_gap->burst_round_trip}};
    }
    for (const auto& s : samples) {
      out["ping_pong"].push_back({{"bytes", s.bytes}, {"seconds", s.seconds}});
    }
    for (const auto& k : kernels) {
      out["kernels"].push_back(
          {{"dtype", k.dtype}, {"op", k.op}, {"seconds_per_byte", k.seconds_per_byte}});
    }
    std::cout << out.dump(2) << "\n";
    return;
  }
  std::cout << fmt::format("calibrated on the {} backend (median of {} repetitions, {} fit)\n\n",
                           o.backend, o.repetitions, o.fit);
  std::cout << fmt::format("{:>10}  {:>12}  {:>12}  {:>7}\n", "bytes", "one-way", "fit", "error");
  for (const auto& s : samples) {
    const double predicted = fit.intercept + fit.slope * static_cast<double>(s.bytes);
    std::cout << fmt::format("{:>10}  {:>9.3f} us  {:>9.3f} us  {:>6.1f}%\n", s.bytes,
                             s.seconds * 1e6, predicted * 1e6,
                             100 * (predicted - s.seconds) / s.seconds);
  }
  std::cout << fmt::format("\nalpha = {:.3g} s, beta = {:.3g} s/B ({:.2f} GB/s)\n", model.alpha,
                           model.beta, model.beta > 0 ? 1e-9 / model.beta : 0.0);
  std::cout << fmt::format("copy  = {:.3g} s/B ({:.2f} GB/s)\n", model.copy,
                           model.copy > 0 ? 1e-9 / model.copy : 0.0);
  std::cout << "gamma per kernel (s/B):";
  for (const auto& k : kernels) {
    std::cout << fmt::format("{}{} {} {:.3g}", &k == kernels.data() ? " " : ", ", k.dtype, k.op,
                             k.seconds_per_byte);
  }
  std::cout << fmt::format("\ngamma = {:.3g} s/B ({} {}, --dtype/--op)\n", model.gamma, o.dtype,
                           o.op);
  if (send_gap) {
    std::cout << fmt::format(
        "send and receive gap = {:.3g} s (round trip of {} B: {:.3f} us alone, {:.3f} us with a "
        "burst of {} sends)\n",
        send_gap->gap, send_gap->bytes, send_gap->single_round_trip * 1e6,
        send_gap->burst_round_trip * 1e6, send_gap->burst);
  }
  if (shared_send_min_bytes) {
    std::cout << fmt::format(
        "shared sends from {} B (all ranks on one node: the same-node channel copies a buffer "
        "sent to several ranks once)\n",
        *shared_send_min_bytes);
  }
  if (cores) {
    std::cout << fmt::format(
        "cores = {} (every rank on this node: with more ranks busy than cores, the model slows "
        "what is in progress by busy / cores)\n",
        *cores);
  }
  if (!o.out.empty()) std::cout << fmt::format("model written to {}\n", o.out);
}

}  // namespace

void add_calibrate_command(CLI::App& app) {
  auto o = std::make_shared<CalibrateOptions>();
  auto* sub = app.add_subcommand(
      "calibrate", "measure alpha, beta, gamma and the copy cost here; write model.json");
  sub->add_option("--backend", o->backend, "threads (two threads) or mpi (ranks 0 and 1 of mpirun)")
      ->capture_default_str();
  sub->add_option("--out", o->out, "write the model to this file (JSON, for --model)");
  add_bytes_option(*sub, "--max-bytes", o->max_bytes, "largest ping-pong message (K, M suffixes)")
      ->capture_default_str();
  sub->add_option("--kernel-bytes", o->kernel_bytes, "buffer for the reduction and copy timings")
      ->capture_default_str();
  sub->add_option("--repetitions", o->repetitions, "timings per size (the median counts)")
      ->capture_default_str();
  sub->add_option("--burst", o->burst, "sends per burst when measuring the send gap")
      ->capture_default_str();
  sub->add_option("--dtype", o->dtype, "the element type whose kernel sets gamma")
      ->capture_default_str();
  sub->add_option("--op", o->op, "the operator whose kernel sets gamma")->capture_default_str();
  sub->add_option("--fit", o->fit,
                  "asymptotic (beta from the large messages, alpha from the small) or relative "
                  "(least relative error over all sizes)")
      ->capture_default_str();
  sub->add_option("--timeout", o->timeout_ms, "ms to wait for the peer")->capture_default_str();
  sub->add_flag("--json", o->json, "one JSON document on stdout");
  sub->callback([o] { run_calibrate(*o); });
}

}  // namespace optcoll::cli
