// SPDX-License-Identifier: Apache-2.0
// File: `optcoll bench`: an OSU-style comparison, in one run under mpirun, of optcoll's
// collectives (a Communicator over MpiTransport, `auto` under the model) and the MPI
// library's own, for message sizes from --min-bytes to --max-bytes. For each collective and
// size: the median over iterations of the slowest rank's time both ways, their ratio, the
// algorithm optcoll chose and the model's prediction for it, and whether both computed the
// same result (compared element by element on every rank; the data are small integers, so
// every reduction order gives the same doubles). gatherv and scatterv run with the irregular
// counts of Träff's distributions (--dists), both as the planned call (all counts known
// everywhere) and with MPI's semantics through the C API (counts at the root only; the rows
// "gatherv (C API)", "scatterv (C API)"); alltoallv likewise, row r of its count matrix drawn
// from the distribution with seed + r ("alltoallv", "alltoallv (C API)": each rank gives its
// own row and column).
//
//   mpirun -np 4 optcoll bench --max-bytes 8M --model model.json --format csv
#include <algorithm>
#include <cstdio>
#include <functional>
#include <iostream>
#include <limits>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands/commands.h"
#include "cli/commands/mpi_backend.h"
#include "cli/options.h"
#include "optcoll/algorithms/registry.h"
#include "optcoll/model/cost_model.h"
#include "optcoll/model/distributions.h"
#include "optcoll/model/error.h"

#ifdef OPTCOLL_WITH_MPI
#include <mpi.h>

#include "optcoll.h"
#include "optcoll/api/communicator.h"
#include "optcoll/exec/mpi/mpi_transport.h"
#endif

namespace optcoll::cli {
namespace {

const std::vector<std::string> kCollectives = {
    "bcast",    "reduce",  "allreduce", "allgather", "reduce_scatter_block",
    "alltoall", "gatherv", "scatterv",  "alltoallv", "scan",
    "exscan"};

// The distributions' parameter k in Träff's experiments (p = 2000); rows with another k
// carry it in their counts label.
constexpr std::int64_t kPaperDistK = 5;

struct BenchOptions {
  std::vector<std::string> collectives = kCollectives;
  std::vector<std::string> dists = {"spikes", "skewed"};
  std::size_t min_bytes = 8;
  std::size_t max_bytes = std::size_t{8} << 20;
  std::size_t factor = 8;
  int iterations = 20;
  int rounds = 1;  // per case: optcoll then MPI, this many times (interleaved)
  int root = 0;
  std::uint64_t seed = 1;
  // The distributions' parameter k (spikes: one block in k is k times larger; skewed: the
  // first k ranks hold everything). The paper's 5 was for p = 2000: at p <= 5 it makes
  // skewed counts regular, and spikes rare.
  std::int64_t dist_k = kPaperDistK;
  std::string model_path;
  // "collective=algorithm" overrides of auto (both the Communicator and the C API rows).
  std::vector<std::string> algorithms;
  std::string format = "markdown";
  std::string out;
  int timeout_ms = 60000;
};

struct Row {
  std::string collective;
  std::string counts;  // "regular" or a distribution's name
  std::size_t bytes = 0;
  std::string algorithm;
  double ours = 0;
  double predicted = -1;  // < 0: not planned by this call (the C API plans inside)
  double theirs = 0;
  bool same = false;
};

void check_options(const BenchOptions& o) {
  for (const auto& c : o.collectives) {
    if (std::find(kCollectives.begin(), kCollectives.end(), c) == kCollectives.end()) {
      throw_invalid("unknown collective '{}' for bench (known: {})", c,
                    fmt::join(kCollectives, ", "));
    }
  }
  for (const auto& d : o.dists) parse_distribution(d);
  if (o.min_bytes < 8 || o.min_bytes > o.max_bytes) {
    throw_invalid("--min-bytes {} must be at least 8 and at most --max-bytes {}", o.min_bytes,
                  o.max_bytes);
  }
  if (o.max_bytes > (std::size_t{1} << 30)) {
    throw_invalid("--max-bytes {} is above the limit of 1 GiB per rank", o.max_bytes);
  }
  if (o.factor < 2) throw_invalid("--factor must be at least 2, got {}", o.factor);
  if (o.iterations < 1) throw_invalid("--iterations must be at least 1, got {}", o.iterations);
  if (o.rounds < 1) throw_invalid("--rounds must be at least 1, got {}", o.rounds);
  if (o.dist_k < 1) throw_invalid("--dist-k must be at least 1, got {}", o.dist_k);
  if (o.timeout_ms < 1) throw_invalid("--timeout must be at least 1 ms, got {}", o.timeout_ms);
  for (const auto& pair : o.algorithms) {  // checked here, before MPI starts
    const auto eq = pair.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == pair.size()) {
      throw_invalid("--algorithm '{}' must be collective=algorithm (e.g. allgather=ring)", pair);
    }
    const std::string collective = pair.substr(0, eq);
    const auto kind = parse_collective(collective);
    if (!kind) throw_invalid("--algorithm '{}': unknown collective '{}'", pair, collective);
    if (pair.substr(eq + 1) != "auto") algorithms::lookup(pair.substr(eq + 1), *kind);
  }
  if (o.format != "markdown" && o.format != "csv") {
    throw_invalid("unknown --format '{}' (known: markdown, csv)", o.format);
  }
}

// The rows are timed and written only with MPI (a build without it refuses the command).
#ifdef OPTCOLL_WITH_MPI

// A CSV field (RFC 4180): quoted when it holds a comma or a quote (an algorithm's
// parameters, "compose(reduce/x, bcast/y)").
std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (const char c : text) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + '"';
}

std::string format_rows(const std::vector<Row>& rows, const std::string& format, Rank p,
                        const std::string& model_name) {
  std::string text;
  const auto predicted = [](const Row& r) {
    return r.predicted < 0 ? std::string("-") : fmt::format("{:.1f}", r.predicted * 1e6);
  };
  if (format == "csv") {
    text +=
        "collective,counts,bytes_per_rank,algorithm,optcoll_us,predicted_us,mpi_us,"
        "ratio,same_result\n";
    for (const auto& r : rows) {
      text += fmt::format("{},{},{},{},{:.1f},{},{:.1f},{:.3f},{}\n", csv_field(r.collective),
                          csv_field(r.counts), r.bytes, csv_field(r.algorithm), r.ours * 1e6,
                          predicted(r), r.theirs * 1e6, r.ours / r.theirs, r.same ? "yes" : "NO");
    }
    return text;
  }
  text +=
      fmt::format("optcoll bench: p = {}, model {}, median of the slowest rank\n\n", p, model_name);
  text +=
      "| collective | counts | bytes per rank | optcoll algorithm | optcoll (us) | "
      "predicted (us) | MPI (us) | optcoll / MPI | same result |\n"
      "|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& r : rows) {
    text += fmt::format("| {} | {} | {} | {} | {:.1f} | {} | {:.1f} | {:.2f} | {} |\n",
                        r.collective, r.counts, r.bytes, r.algorithm, r.ours * 1e6, predicted(r),
                        r.theirs * 1e6, r.ours / r.theirs, r.same ? "yes" : "NO");
  }
  return text;
}

// Appends `iterations` times of the slowest rank, one call each (after a barrier).
void time_slowest(int iterations, const std::function<void()>& call, std::vector<double>& times) {
  for (int i = 0; i < iterations; ++i) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double start = MPI_Wtime();
    call();
    const double mine = MPI_Wtime() - start;
    double slowest = 0;
    MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    times.push_back(slowest);
  }
}

double median(std::vector<double> times) {
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

bool same_everywhere(const std::vector<double>& a, const std::vector<double>& b, bool skip_me) {
  int mine = skip_me || a == b ? 1 : 0;
  int all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return all == 1;
}

// One benchmark case: what optcoll runs into `ours`, what MPI runs into `theirs`.
struct Case {
  std::string collective;
  std::string counts = "regular";
  std::function<void()> ours;
  std::function<void()> theirs;
  const std::vector<double>* ours_out = nullptr;
  const std::vector<double>* theirs_out = nullptr;
  bool undefined_at_rank0 = false;
};

std::vector<double> small_integers(std::size_t n, int rank) {
  std::vector<double> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<double>((i * 7 + rank * 3) % 11);
  return v;
}

// Buffers for one message size; every case reads `in`/`rows` and writes an output pair
// (a: optcoll, b: MPI). The bcast buffers hold the root's data from the start (a bcast
// leaves them unchanged there); the reduce output exists at the root only.
struct Buffers {
  std::size_t n = 0;
  std::vector<double> in, rows, out_a, out_b, all_a, all_b, part_a, part_b, bcast_a, bcast_b,
      reduced_a, reduced_b;
};

struct Irregular {
  std::string name;
  std::vector<Count> counts;
  std::vector<int> mpi_counts, displs;
  std::vector<double> block, out_a, out_b, root_in, block_a, block_b;
};

// counts[i] as MPI's ints with their packed displacements; throws past int displacements.
void mpi_counts_of(const std::vector<Count>& counts, const std::string& name, std::size_t n,
                   std::vector<int>& mpi_counts, std::vector<int>& displs) {
  Count total = 0;
  for (const Count c : counts) {
    if (total + c > std::numeric_limits<int>::max()) {
      throw_invalid("bench: the {} counts at {} B per rank exceed MPI's int displacements", name,
                    n * 8);
    }
    mpi_counts.push_back(static_cast<int>(c));
    displs.push_back(static_cast<int>(total));
    total += c;
  }
}

Irregular make_irregular(const std::string& name, std::size_t n, Rank p, Rank me, Rank root,
                         std::uint64_t seed, Count k) {
  Irregular ir;
  ir.name = k == kPaperDistK ? name : fmt::format("{}(k={})", name, k);
  ir.counts = distribution_counts(parse_distribution(name), p, static_cast<Count>(n), seed, k);
  mpi_counts_of(ir.counts, name, n, ir.mpi_counts, ir.displs);
  const Count total = std::accumulate(ir.counts.begin(), ir.counts.end(), Count{0});
  const auto mine = static_cast<std::size_t>(ir.counts[static_cast<std::size_t>(me)]);
  ir.block = small_integers(mine, me);
  ir.block_a.assign(mine, -1);
  ir.block_b.assign(mine, -2);
  const auto at_root = me == root ? static_cast<std::size_t>(total) : 0;
  ir.out_a.assign(at_root, -1);
  ir.out_b.assign(at_root, -2);
  ir.root_in = small_integers(at_root, me);
  return ir;
}

// An alltoallv's buffers: row r of the count matrix (what rank r sends each rank) is the
// distribution's counts drawn with seed + r, so every rank makes the same matrix; MPI's
// sendcounts and recvcounts are this rank's row and column, packed in rank order.
struct IrregularAlltoallv {
  std::string name;
  std::vector<Count> matrix;
  std::vector<int> sendcounts, sdispls, recvcounts, rdispls;
  std::vector<double> in, out_a, out_b;
};

IrregularAlltoallv make_irregular_alltoallv(const std::string& name, std::size_t n, Rank p, Rank me,
                                            std::uint64_t seed, Count k) {
  IrregularAlltoallv a;
  a.name = k == kPaperDistK ? name : fmt::format("{}(k={})", name, k);
  const auto q = static_cast<std::size_t>(p);
  const auto mine = static_cast<std::size_t>(me);
  for (std::size_t r = 0; r < q; ++r) {
    const std::vector<Count> row =
        distribution_counts(parse_distribution(name), p, static_cast<Count>(n), seed + r, k);
    a.matrix.insert(a.matrix.end(), row.begin(), row.end());
  }
  const std::vector<Count> row(a.matrix.begin() + static_cast<std::ptrdiff_t>(mine * q),
                               a.matrix.begin() + static_cast<std::ptrdiff_t>((mine + 1) * q));
  std::vector<Count> column(q);
  for (std::size_t r = 0; r < q; ++r) column[r] = a.matrix[r * q + mine];
  mpi_counts_of(row, name, n, a.sendcounts, a.sdispls);
  mpi_counts_of(column, name, n, a.recvcounts, a.rdispls);
  const auto total = [](const std::vector<Count>& v) {
    return static_cast<std::size_t>(std::accumulate(v.begin(), v.end(), Count{0}));
  };
  a.in = small_integers(total(row), me);
  a.out_a.assign(total(column), -1);
  a.out_b.assign(total(column), -2);
  return a;
}

// What every step of one bench run reads: the options, the Communicator the optcoll rows
// call, and where this rank stands.
struct BenchRun {
  const BenchOptions& o;
  Communicator& comm;
  Rank p = 0;
  Rank me = 0;
  Rank root = 0;

  bool wanted(const std::string& collective) const {
    return std::find(o.collectives.begin(), o.collectives.end(), collective) != o.collectives.end();
  }
};

// The Communicator's options (the model, the timeout, the --algorithm overrides); the C API
// rows plan with the same model.
CommOptions bench_comm_options(const BenchOptions& o, const CostModel& model) {
  if (!o.model_path.empty() && OPTCOLL_Set_model(o.model_path.c_str()) != MPI_SUCCESS) {
    throw_invalid("bench: the C API refused the model '{}'", o.model_path);
  }
  CommOptions options;
  options.model = model;
  options.timeout = std::chrono::milliseconds(o.timeout_ms);
  for (const auto& pair : o.algorithms) {
    const auto eq = pair.find('=');
    options.algorithms[pair.substr(0, eq)] = pair.substr(eq + 1);
  }
  return options;
}

Buffers make_buffers(std::size_t n, Rank p, Rank me, Rank root) {
  const auto np = static_cast<std::size_t>(p);
  Buffers buf;
  buf.n = n;
  buf.in = small_integers(n, me);
  buf.rows = small_integers(n * np, me);
  buf.out_a.assign(n, -1);
  buf.out_b.assign(n, -2);
  buf.all_a.assign(n * np, -1);
  buf.all_b.assign(n * np, -2);
  buf.part_a.assign(n, -1);
  buf.part_b.assign(n, -2);
  buf.bcast_a = me == root ? buf.in : std::vector<double>(n, -1);
  buf.bcast_b = me == root ? buf.in : std::vector<double>(n, -2);
  buf.reduced_a.assign(me == root ? n : 0, -1);
  buf.reduced_b.assign(me == root ? n : 0, -2);
  return buf;
}

// The cases with the same count on every rank, on `buf` (which must outlive them).
void add_regular_cases(const BenchRun& run, Buffers& buf, std::vector<Case>& cases) {
  Communicator& comm = run.comm;
  const Rank root = run.root;
  const int count = static_cast<int>(buf.n);
  const auto in = std::span<const double>(buf.in);
  if (run.wanted("bcast")) {
    cases.push_back({"bcast", "regular",
                     [&comm, &buf, root] { comm.bcast<double>(buf.bcast_a, root); },
                     [&buf, count, root] {
                       MPI_Bcast(buf.bcast_b.data(), count, MPI_DOUBLE, root, MPI_COMM_WORLD);
                     },
                     &buf.bcast_a, &buf.bcast_b});
  }
  if (run.wanted("reduce")) {
    cases.push_back(
        {"reduce", "regular",
         [&comm, &buf, in, root] { comm.reduce<double>(in, buf.reduced_a, "sum", root); },
         [&buf, count, root] {
           MPI_Reduce(buf.in.data(), buf.reduced_b.data(), count, MPI_DOUBLE, MPI_SUM, root,
                      MPI_COMM_WORLD);
         },
         &buf.reduced_a, &buf.reduced_b});
  }
  if (run.wanted("allreduce")) {
    cases.push_back({"allreduce", "regular",
                     [&comm, &buf, in] { comm.allreduce<double>(in, buf.out_a, "sum"); },
                     [&buf, count] {
                       MPI_Allreduce(buf.in.data(), buf.out_b.data(), count, MPI_DOUBLE, MPI_SUM,
                                     MPI_COMM_WORLD);
                     },
                     &buf.out_a, &buf.out_b});
  }
  if (run.wanted("allgather")) {
    cases.push_back({"allgather", "regular",
                     [&comm, &buf, in] { comm.allgather<double>(in, buf.all_a); },
                     [&buf, count] {
                       MPI_Allgather(buf.in.data(), count, MPI_DOUBLE, buf.all_b.data(), count,
                                     MPI_DOUBLE, MPI_COMM_WORLD);
                     },
                     &buf.all_a, &buf.all_b});
  }
  if (run.wanted("reduce_scatter_block")) {
    cases.push_back(
        {"reduce_scatter_block", "regular",
         [&comm, &buf] { comm.reduce_scatter_block<double>(buf.rows, buf.part_a, "sum"); },
         [&buf, count] {
           MPI_Reduce_scatter_block(buf.rows.data(), buf.part_b.data(), count, MPI_DOUBLE, MPI_SUM,
                                    MPI_COMM_WORLD);
         },
         &buf.part_a, &buf.part_b});
  }
  if (run.wanted("alltoall")) {
    cases.push_back({"alltoall", "regular",
                     [&comm, &buf] { comm.alltoall<double>(buf.rows, buf.all_a); },
                     [&buf, count] {
                       MPI_Alltoall(buf.rows.data(), count, MPI_DOUBLE, buf.all_b.data(), count,
                                    MPI_DOUBLE, MPI_COMM_WORLD);
                     },
                     &buf.all_a, &buf.all_b});
  }
  if (run.wanted("scan")) {
    cases.push_back(
        {"scan", "regular", [&comm, &buf, in] { comm.scan<double>(in, buf.out_a, "sum"); },
         [&buf, count] {
           MPI_Scan(buf.in.data(), buf.out_b.data(), count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
         },
         &buf.out_a, &buf.out_b});
  }
  if (run.wanted("exscan")) {
    // Rank 0's exscan output is undefined in MPI: compared on the other ranks only.
    cases.push_back(
        {"exscan", "regular", [&comm, &buf, in] { comm.exscan<double>(in, buf.part_a, "sum"); },
         [&buf, count] {
           MPI_Exscan(buf.in.data(), buf.part_b.data(), count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
         },
         &buf.part_a, &buf.part_b, /*undefined_at_rank0=*/true});
  }
}

// gatherv and scatterv, planned and through the C API, for each distribution of --dists at
// `n` elements per rank; `irregular` holds their buffers (which must outlive the cases).
void add_irregular_cases(const BenchRun& run, std::size_t n,
                         std::vector<std::unique_ptr<Irregular>>& irregular,
                         std::vector<Case>& cases) {
  if (!run.wanted("gatherv") && !run.wanted("scatterv")) return;
  Communicator& comm = run.comm;
  const Rank root = run.root;
  for (const auto& dist : run.o.dists) {
    irregular.push_back(std::make_unique<Irregular>(
        make_irregular(dist, n, run.p, run.me, root, run.o.seed, run.o.dist_k)));
    Irregular* ir = irregular.back().get();
    const int mine = ir->mpi_counts[static_cast<std::size_t>(run.me)];
    const auto theirs_gatherv = [ir, mine, root] {
      MPI_Gatherv(ir->block.data(), mine, MPI_DOUBLE, ir->out_b.data(), ir->mpi_counts.data(),
                  ir->displs.data(), MPI_DOUBLE, root, MPI_COMM_WORLD);
    };
    const auto theirs_scatterv = [ir, mine, root] {
      MPI_Scatterv(ir->root_in.data(), ir->mpi_counts.data(), ir->displs.data(), MPI_DOUBLE,
                   ir->block_b.data(), mine, MPI_DOUBLE, root, MPI_COMM_WORLD);
    };
    if (run.wanted("gatherv")) {
      cases.push_back(
          {"gatherv", ir->name,
           [&comm, ir, root] { comm.gatherv<double>(ir->block, ir->out_a, ir->counts, root); },
           theirs_gatherv, &ir->out_a, &ir->out_b});
      cases.push_back({"gatherv (C API)", ir->name,
                       [ir, mine, root] {
                         OPTCOLL_Gatherv(ir->block.data(), mine, MPI_DOUBLE, ir->out_a.data(),
                                         ir->mpi_counts.data(), ir->displs.data(), MPI_DOUBLE, root,
                                         MPI_COMM_WORLD);
                       },
                       theirs_gatherv, &ir->out_a, &ir->out_b});
    }
    if (run.wanted("scatterv")) {
      cases.push_back(
          {"scatterv", ir->name,
           [&comm, ir, root] { comm.scatterv<double>(ir->root_in, ir->block_a, ir->counts, root); },
           theirs_scatterv, &ir->block_a, &ir->block_b});
      cases.push_back({"scatterv (C API)", ir->name,
                       [ir, mine, root] {
                         OPTCOLL_Scatterv(ir->root_in.data(), ir->mpi_counts.data(),
                                          ir->displs.data(), MPI_DOUBLE, ir->block_a.data(), mine,
                                          MPI_DOUBLE, root, MPI_COMM_WORLD);
                       },
                       theirs_scatterv, &ir->block_a, &ir->block_b});
    }
  }
}

// alltoallv, planned (every rank knows the matrix) and through the C API (each rank gives its
// own row and column; under auto the C API exchanges the matrix), for each distribution of
// --dists at `n` elements per pair on average; `alltoallv` holds their buffers.
void add_alltoallv_cases(const BenchRun& run, std::size_t n,
                         std::vector<std::unique_ptr<IrregularAlltoallv>>& alltoallv,
                         std::vector<Case>& cases) {
  if (!run.wanted("alltoallv")) return;
  Communicator& comm = run.comm;
  for (const auto& dist : run.o.dists) {
    alltoallv.push_back(std::make_unique<IrregularAlltoallv>(
        make_irregular_alltoallv(dist, n, run.p, run.me, run.o.seed, run.o.dist_k)));
    IrregularAlltoallv* a = alltoallv.back().get();
    const auto theirs = [a] {
      MPI_Alltoallv(a->in.data(), a->sendcounts.data(), a->sdispls.data(), MPI_DOUBLE,
                    a->out_b.data(), a->recvcounts.data(), a->rdispls.data(), MPI_DOUBLE,
                    MPI_COMM_WORLD);
    };
    cases.push_back({"alltoallv", a->name,
                     [&comm, a] { comm.alltoallv<double>(a->in, a->out_a, a->matrix); }, theirs,
                     &a->out_a, &a->out_b});
    cases.push_back({"alltoallv (C API)", a->name,
                     [a] {
                       OPTCOLL_Alltoallv(a->in.data(), a->sendcounts.data(), a->sdispls.data(),
                                         MPI_DOUBLE, a->out_a.data(), a->recvcounts.data(),
                                         a->rdispls.data(), MPI_DOUBLE, MPI_COMM_WORLD);
                     },
                     theirs, &a->out_a, &a->out_b});
  }
}

// One case's row: a warm-up of each side (optcoll plans here, cached afterwards), then
// rounds of optcoll and MPI in turn, so that a slow spell of the machine falls on both.
Row time_case(const BenchRun& run, const Case& c, std::size_t bytes) {
  // A copy, not a reference: the plan before this case, compared after its call.
  const auto before = run.comm.last_plan();  // NOLINT(performance-unnecessary-copy-initialization)
  Row row;
  row.collective = c.collective;
  row.counts = c.counts;
  row.bytes = bytes;
  c.ours();
  const auto& ran = run.comm.last_plan();
  if (ran != nullptr && ran != before) {
    row.algorithm = ran->algorithm;
    row.predicted = ran->predicted_time;
  } else {
    row.algorithm = "(C API: auto)";
  }
  c.theirs();
  std::vector<double> ours;
  std::vector<double> theirs;
  for (int round = 0; round < run.o.rounds; ++round) {
    time_slowest(run.o.iterations, c.ours, ours);
    time_slowest(run.o.iterations, c.theirs, theirs);
  }
  row.ours = median(ours);
  row.theirs = median(theirs);
  row.same = same_everywhere(*c.ours_out, *c.theirs_out, c.undefined_at_rank0 && run.me == 0);
  return row;
}

std::vector<Row> run_bench(const BenchOptions& o, const CostModel& model) {
  ensure_mpi_initialized();
  const Rank p = mpi_world_size();
  if (o.root < 0 || o.root >= p) throw_invalid("--root {} is out of range for p = {}", o.root, p);
  const CommOptions options = bench_comm_options(o, model);
  mpi::MpiTransport transport(MPI_COMM_WORLD);
  Communicator comm(transport, std::make_shared<PlanCache>(), options);  // checks the names
  for (const auto& [collective, algorithm] : options.algorithms) {
    OPTCOLL_Set_algorithm(collective.c_str(), algorithm.c_str());  // names known good
  }
  const BenchRun run{o, comm, p, mpi_world_rank(), o.root};
  std::vector<Row> rows;
  for (std::size_t bytes = o.min_bytes; bytes <= o.max_bytes; bytes *= o.factor) {
    Buffers buf = make_buffers(bytes / 8, p, run.me, run.root);
    std::vector<std::unique_ptr<Irregular>> irregular;
    std::vector<std::unique_ptr<IrregularAlltoallv>> alltoallv;
    std::vector<Case> cases;
    add_regular_cases(run, buf, cases);
    add_irregular_cases(run, buf.n, irregular, cases);
    add_alltoallv_cases(run, buf.n, alltoallv, cases);
    for (const auto& c : cases) rows.push_back(time_case(run, c, bytes));
  }
  MPI_Barrier(MPI_COMM_WORLD);
  return rows;
}

// A model calibrated with another number of ranks: the ping-pong's alpha and beta include
// what the other ranks' polling cost it where ranks outnumber cores (measured at p = 4 on 2
// cores: a model from p = 2 chose algorithms up to 3x slower; docs/performance.md, "Which model
// at p = 4"). A note on stderr, not an error: the model is still usable.
void note_calibrated_ranks(const std::string& model_text, const std::string& path, Rank p) {
  const auto doc = nlohmann::json::parse(model_text);  // parse_cost_model_json checked it
  if (!doc.contains("calibrated_ranks")) return;
  const auto ranks = doc["calibrated_ranks"].get<std::int64_t>();
  if (ranks == p) return;
  std::cerr << fmt::format(
      "note: {} was calibrated with {} ranks and this run has {}; where ranks outnumber cores, "
      "a model calibrated under the same mpirun -np predicts this run better\n",
      path, ranks, p);
}

#endif

void run_bench_command(const BenchOptions& o) {
  check_options(o);
  if (!mpi_backend_available()) {
    throw_invalid(
        "optcoll bench compares with the MPI library: this optcoll was built "
        "without MPI (install libopenmpi-dev or libmpich-dev and rebuild)");
  }
  const std::string model_text = o.model_path.empty() ? std::string() : read_file(o.model_path);
#ifdef OPTCOLL_WITH_MPI
  ensure_mpi_initialized();
  if (mpi_world_size() < 2) {  // without mpirun: one process, where every collective is a copy
    throw_invalid(
        "optcoll bench times collectives between MPI processes: start it with mpirun -np 2 "
        "(or more); this run has {} process",
        mpi_world_size());
  }
  // Without --model, the model every Communicator on MPI plans with (and the C API's rows).
  const CostModel default_model = mpi_world_default_model();
  const CostModel model = o.model_path.empty()
                              ? default_model
                              : parse_cost_model_json(model_text, reference_cluster_model());
  const std::string model_name = !o.model_path.empty() ? o.model_path
                                 : default_model == reference_cluster_model()
                                     ? std::string("reference cluster")
                                     : std::string("the MPI backend's one-node default");
  if (mpi_world_rank() == 0 && !model_text.empty()) {
    note_calibrated_ranks(model_text, o.model_path, mpi_world_size());
  }
  const auto rows = run_bench(o, model);
  if (mpi_world_rank() == 0) {
    const std::string text = format_rows(rows, o.format, mpi_world_size(), model_name);
    if (o.out.empty()) {
      std::cout << text << std::flush;
    } else {
      // Complete or absent: a reader polling for the file never sees half a table.
      write_file(o.out + ".partial", text);
      if (std::rename((o.out + ".partial").c_str(), o.out.c_str()) != 0) {
        throw_invalid("cannot rename '{}.partial' to '{}'", o.out, o.out);
      }
    }
  }
  for (const auto& r : rows) {
    if (!r.same) throw CheckFailed{};
  }
#endif
}

}  // namespace

void add_bench_command(CLI::App& app) {
  auto o = std::make_shared<BenchOptions>();
  auto* sub = app.add_subcommand(
      "bench", "time optcoll against the MPI library's collectives (run under mpirun)");
  sub->add_option("--collectives", o->collectives, "which collectives (default: all)")
      ->delimiter(',');
  sub->add_option("--dists", o->dists, "count distributions for gatherv/scatterv")
      ->delimiter(',')
      ->capture_default_str();
  add_bytes_option(*sub, "--min-bytes", o->min_bytes, "smallest message per rank (K, M suffixes)")
      ->capture_default_str();
  add_bytes_option(*sub, "--max-bytes", o->max_bytes, "largest message per rank (K, M suffixes)")
      ->capture_default_str();
  sub->add_option("--factor", o->factor, "size step (multiply)")->capture_default_str();
  sub->add_option("--iterations", o->iterations,
                  "timed calls per case and round (the median counts)")
      ->capture_default_str();
  sub->add_option("--rounds", o->rounds,
                  "per case, rounds of optcoll then MPI in turn (medians over all)")
      ->capture_default_str();
  sub->add_option("--root", o->root, "root of the rooted collectives")->capture_default_str();
  sub->add_option("--seed", o->seed, "seed of the random distributions")->capture_default_str();
  sub->add_option("--dist-k", o->dist_k,
                  "the distributions' k: skewed gives the first k ranks b*p/k elements each, "
                  "spikes makes one block in k a spike of k*b (the paper's 5 suits p >> 5)")
      ->capture_default_str();
  sub->add_option("--model", o->model_path, "model.json for auto (e.g. from optcoll calibrate)");
  sub->add_option("--algorithm", o->algorithms,
                  "collective=algorithm instead of auto (repeat, or separate by commas)")
      ->delimiter(',');
  sub->add_option("--format", o->format, "markdown or csv")->capture_default_str();
  sub->add_option("--out", o->out,
                  "write the table to this file (complete, by rename) instead of stdout");
  sub->add_option("--timeout", o->timeout_ms, "ms before a stalled call fails")
      ->capture_default_str();
  sub->callback([o] { run_bench_command(*o); });
}

}  // namespace optcoll::cli
