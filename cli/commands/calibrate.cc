// SPDX-License-Identifier: Apache-2.0
// File: `optcoll calibrate`: measures the cost model with every rank of the world active
// (optcoll/api/calibrate_node.h: the ping-pong's bandwidth, a step under load, the copy and
// reduction rates, the node's memory throughput at 1..p ranks, the send gap, the send mode;
// under mpirun on several nodes the two levels and the NIC ports), prints each parameter with
// what it was fitted to and its fit error (and those it could not measure, with why), checks
// the fitted model against measurements it was not fitted to, and writes the per-byte model
// as model.json for `--model` (CLI) or OPTCOLL_Set_model / $OPTCOLL_MODEL (C API, PMPI
// library).
//
//   optcoll calibrate --backend threads -p 16 --out model.json
//   mpirun -np 16 optcoll calibrate --backend mpi --out model.json
#include <filesystem>
#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands/commands.h"
#include "cli/commands/mpi_backend.h"
#include "cli/options.h"
#include "optcoll/api/calibrate_node.h"
#include "optcoll/exec/threads/thread_transport.h"
#include "optcoll/exec/threads/world.h"
#include "optcoll/model/error.h"

namespace optcoll::cli {
namespace {

struct CalibrateOptions {
  std::string backend = "threads";
  Rank nranks = 0;  // threads: default the processors this process may use (at least 2)
  std::string out;
  std::size_t max_bytes = std::size_t{4} << 20;
  std::size_t kernel_bytes = std::size_t{4} << 20;
  int repetitions = 20;
  int burst = 16;
  std::string dtype = "double";
  std::string op = "sum";
  std::string fit = "asymptotic";
  int timeout_ms = 30000;
  bool json = false;
};

// A fit error above this is reported as a warning: the model will mispredict what it fits.
constexpr double kSuspectFitError = 1.0;

NodeCalibrationOptions engine_options(const CalibrateOptions& o) {
  NodeCalibrationOptions n;
  n.max_bytes = o.max_bytes;
  n.repetitions = o.repetitions;
  n.burst = o.burst;
  n.stream_bytes = o.kernel_bytes;
  n.dtype = o.dtype;
  n.op = o.op;
  n.fit = parse_fit_kind(o.fit);
  n.timeout = std::chrono::milliseconds(o.timeout_ms);
  return n;
}

// Everything that can be checked before measuring is (minutes of measurement are not lost
// to a typo).
void check_options(const CalibrateOptions& o, const NodeCalibrationOptions& n) {
  if (o.backend != "threads" && o.backend != "mpi") {
    throw_invalid("unknown --backend '{}' (known: threads, mpi)", o.backend);
  }
  if (o.backend == "threads" && o.nranks != 0 && o.nranks < 2) {
    throw_invalid("calibrate needs -p of at least 2, got {}", o.nranks);
  }
  check_calibration_options(n);
  if (!o.out.empty()) {
    const std::filesystem::path path(o.out);
    const auto dir = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
    if (std::filesystem::is_directory(path)) throw_invalid("--out '{}' is a directory", o.out);
    if (!std::filesystem::is_directory(dir)) {
      throw_invalid("--out '{}': the directory '{}' does not exist", o.out, dir.string());
    }
  }
}

std::string value_text(const FittedParameter& f, const CostModel& m) {
  if (f.name == "send_mode") {
    for (const auto& [word, mode] : kSendModeNames) {
      if (mode == m.send_mode) return fmt::format("{} (from {} B)", word, m.send_mode_min_bytes);
    }
  }
  if (f.name == "nic_ports") return fmt::format("{:.0f} per node", f.value);
  if (f.name == "rendezvous_bytes") {
    return m.rendezvous_max_bytes
               ? fmt::format("{:.0f} B (up to {} B)", f.value, *m.rendezvous_max_bytes)
               : fmt::format("{:.0f} B", f.value);
  }
  if (f.name == "alpha" || f.name == "inter_alpha" || f.name == "send_gap" ||
      f.name == "rendezvous_alpha") {
    return fmt::format("{:.3f} us", f.value * 1e6);
  }
  return fmt::format("{:.4g} s/B ({:.2f} GB/s)", f.value, f.value > 0 ? 1e-9 / f.value : 0.0);
}

std::string model_json(const NodeCalibration& c, const CalibrateOptions& o,
                       const std::string& ran_on) {
  nlohmann::json doc = nlohmann::json::parse(cost_model_to_json(c.model));
  doc["calibrated_ranks"] = c.ranks;
  doc["source"] = fmt::format("optcoll calibrate --backend {} on {}", o.backend, ran_on);
  return doc.dump(2);
}

void print_json(const NodeCalibration& c, const std::string& model) {
  nlohmann::json out = {
      {"model", nlohmann::json::parse(model)}, {"ranks", c.ranks}, {"seconds", c.seconds}};
  for (const auto& f : c.fitted) {
    out["fitted"].push_back(
        {{"parameter", f.name}, {"value", f.value}, {"from", f.from}, {"fit_error", f.error}});
  }
  for (const auto& u : c.unmeasured) {
    out["not_measured"].push_back({{"parameter", u.name}, {"value", u.value}, {"why", u.why}});
  }
  for (const auto& k : c.checks) {
    out["checks"].push_back(
        {{"what", k.what}, {"measured", k.measured}, {"predicted", k.predicted}});
  }
  for (const auto& s : c.ping_pong)
    out["ping_pong"].push_back({{"bytes", s.bytes}, {"seconds", s.seconds}});
  for (const auto& s : c.exchange)
    out["exchange"].push_back({{"bytes", s.bytes}, {"seconds", s.seconds}});
  for (std::size_t k = 0; k < c.copy_throughput.size(); ++k) {
    out["copy_throughput"].push_back(
        {{"ranks", k + 1}, {"bytes_per_second", c.copy_throughput[k]}});
  }
  for (std::size_t k = 0; k < c.nic_streams.size(); ++k) {
    out["nic_streams"].push_back({{"streams", k + 1}, {"seconds", c.nic_streams[k]}});
  }
  for (const auto& k : c.kernels) {
    out["kernels"].push_back(
        {{"dtype", k.dtype}, {"op", k.op}, {"seconds_per_byte", k.seconds_per_byte}});
  }
  std::cout << out.dump(2) << "\n";
}

void print_text(const NodeCalibration& c, const CalibrateOptions& o, const std::string& ran_on) {
  std::cout << fmt::format(
      "calibrated on the {} backend, {} ranks ({}), in {:.1f} s (median of {} repetitions)\n\n",
      o.backend, c.ranks, ran_on, c.seconds, o.repetitions);
  std::cout << fmt::format("{:<16} {:<28} {:>9}  {}\n", "parameter", "value", "fit error",
                           "fitted to");
  for (const auto& f : c.fitted) {
    std::cout << fmt::format("{:<16} {:<28} {:>8.1f}%  {}\n", f.name, value_text(f, c.model),
                             f.error * 100, f.from);
  }
  for (const auto& u : c.unmeasured) {
    std::cout << fmt::format("{:<16} {:<28} {:>9}  not measured: {}\n", u.name, u.value, "-",
                             u.why);
  }
  if (c.model.placement) {
    std::cout << fmt::format("{:<16} {:<28} {:>9}  where the MPI processes run (node per rank)\n",
                             "placement", to_string(*c.model.placement), "-");
  }
  if (c.model.cores) {
    std::cout << fmt::format("{:<16} {:<28} {:>9}  the processors the ranks share\n", "cores",
                             *c.model.cores, "-");
  }
  std::cout << "\nchecks (the fitted model against measurements it was not fitted to):\n";
  for (const auto& k : c.checks) {
    std::cout << fmt::format("  {}: measured {:.2f} us, predicted {:.2f} us (x{:.2f})\n", k.what,
                             k.measured * 1e6, k.predicted * 1e6, k.predicted / k.measured);
  }
  std::cout << "\ncopy throughput, k ranks at once (GB/s in all):";
  for (const double t : c.copy_throughput) std::cout << fmt::format(" {:.1f}", t * 1e-9);
  std::cout << "\n";
  if (!c.nic_streams.empty()) {
    std::cout << "streams between two nodes, k at once (us per call):";
    for (const double t : c.nic_streams) std::cout << fmt::format(" {:.1f}", t * 1e6);
    std::cout << "\n";
  }
  for (const auto& f : c.fitted) {
    if (f.error > kSuspectFitError) {
      std::cerr << fmt::format(
          "optcoll: warning: {}'s fit error is {:.0f}%: the model will mispredict what it was "
          "fitted to ({}); rerun with more --repetitions on an idle machine\n",
          f.name, f.error * 100, f.from);
    }
  }
  if (!o.out.empty()) std::cout << fmt::format("model written to {}\n", o.out);
}

void run_calibrate(const CalibrateOptions& o) {
  NodeCalibrationOptions n = engine_options(o);
  check_options(o, n);
  NodeCalibration c;
  std::string ran_on;
  if (o.backend == "mpi") {
    ensure_mpi_initialized();
    if (o.nranks != 0 && o.nranks != mpi_world_size()) {
      throw_invalid("-p {} differs from the {} MPI processes calibrate runs on", o.nranks,
                    mpi_world_size());
    }
    if (mpi_world_size() < 2) {
      throw_invalid(
          "calibrate --backend mpi measures between MPI processes: start it with mpirun -np 2 "
          "(or more), got {}",
          mpi_world_size());
    }
    c = calibrate_on_mpi(n);
    if (mpi_world_rank() != 0) return;
    ran_on = fmt::format("{} MPI processes", mpi_world_size());
  } else {
    const int cpus = allowed_processors();
    const Rank p = o.nranks != 0 ? o.nranks : std::max(2, cpus);
    if (cpus > 0) n.cores = cpus;  // a world's threads share them
    // The thread backend's large transfers are copied by the receiver straight from the
    // sender's memory; small ones are eager (copied into a mailbox by the sender). Receiver
    // first: where the fan-out cannot tell them apart (p = 2: one message), the model keeps
    // the backend's own, as its default model (thread_node_model) has it.
    n.send_modes = {SendMode::kReceiver, SendMode::kPort};
    n.send_mode_min_bytes = threads::ThreadTransport::kEagerBytes + 1;
    n.combines_in_place = true;  // a receive-reduce combines from the sender's memory
    ThreadWorld world(p, WorldOptions{n.timeout});
    ran_on = world.describe();
    world.run([&](Transport& transport) {
      // Large copies are shared where this run's ranks spin (the world decides per run).
      NodeCalibrationOptions here = n;
      if (world.spins()) here.helped_bytes = threads::ThreadTransport::kShareBytes;
      NodeCalibration mine = calibrate_node(transport, here);
      if (transport.rank() == 0) c = std::move(mine);
    });
  }
  const std::string model = model_json(c, o, ran_on);
  if (!o.out.empty()) write_file(o.out, model + "\n");
  if (o.json) {
    print_json(c, model);
  } else {
    print_text(c, o, ran_on);
  }
}

}  // namespace

void add_calibrate_command(CLI::App& app) {
  auto o = std::make_shared<CalibrateOptions>();
  auto* sub = app.add_subcommand(
      "calibrate",
      "measure the cost model with every rank busy (ping-pong, steps under load, copy and "
      "reduction rates, the node's memory throughput, gaps, send mode); write model.json");
  sub->add_option("--backend", o->backend, "threads (-p ranks) or mpi (every rank of mpirun)")
      ->capture_default_str();
  sub->add_option("-p,--nranks", o->nranks,
                  "ranks (threads; default the processors this process may use, at least 2)");
  sub->add_option("--out", o->out, "write the model to this file (JSON, for --model)");
  add_bytes_option(*sub, "--max-bytes", o->max_bytes,
                   "largest ping-pong and exchange message (K, M suffixes)")
      ->capture_default_str();
  add_bytes_option(*sub, "--kernel-bytes", o->kernel_bytes,
                   "each rank's buffer for the copy and reduction timings")
      ->capture_default_str();
  sub->add_option("--repetitions", o->repetitions, "timings per size (the median counts)")
      ->capture_default_str();
  sub->add_option("--burst", o->burst, "sends per burst when measuring the send gap")
      ->capture_default_str();
  sub->add_option("--dtype", o->dtype, "the element type whose kernel sets gamma")
      ->capture_default_str();
  sub->add_option("--op", o->op, "the operator whose kernel sets gamma")->capture_default_str();
  sub->add_option("--fit", o->fit,
                  "asymptotic (beta from the large messages) or relative (least relative error "
                  "over all sizes)")
      ->capture_default_str();
  sub->add_option("--timeout", o->timeout_ms, "ms to wait for a peer")->capture_default_str();
  sub->add_flag("--json", o->json, "one JSON document on stdout");
  sub->callback([o] { run_calibrate(*o); });
}

}  // namespace optcoll::cli
