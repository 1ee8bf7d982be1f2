// SPDX-License-Identifier: Apache-2.0
// File: the registry grid and the fault cases on the MPI backend, run under mpirun (one
// launch per rank count: ctest registers `mpirun -np P mpi_registry_run grid` for P = 1..4).
//
//   grid              every registry algorithm over the grid's specs for p = the world size
//                     (roots, count patterns with zeros, non-commutative cases), with real
//                     data against the naive reference; rank 0 prints the summary.
//   fault-throw       rank 1 fails before the collective and tells the others (abort): every
//                     other rank must fail naming rank 1, well within the timeout.
//   fault-throw-large the same with messages of several same-node chunks (320 KB), rank 1
//                     failing 300 ms late: the others wait on one such message each.
//   fault-throw-small, fault-stall-small, fault-size-small   throw, stall and size with
//                     messages of 80 B (104 B) through the eager rings (rank 1 throwing
//                     300 ms late): the others wait on ring messages alone.
//   fault-stall       rank 1 sleeps past the timeout: every other rank must fail within it,
//                     naming what it waited on.
//   communicator      the C++ Communicator over MpiTransport: allreduce, bcast, gatherv
//                     (irregular counts, known everywhere), allgather, alltoall and
//                     reduce_scatter_block, scan (sum, max) and exscan (ranks > 0: MPI
//                     leaves rank 0's result undefined), three times each (plans cached),
//                     equal bit for bit to MPI's own collectives on the same int64 data.
//   in-flight         the grid again, each case three times at once on one transport
//                     (CollectivesInFlight, epochs in the tags), completed in reverse order.
//   grid-rings, in-flight-rings   the same with the eager rings of small same-node messages
//                     also where the ranks outnumber the CPUs (they are off there by default).
//   nonblocking       the Communicator's nonblocking and persistent forms (several in
//                     flight, blocking calls among them, persistent gatherv started again
//                     with new data), equal to MPI's own collectives.
//   progress-thread   the same with a progress thread (MPI_Init_thread MULTIPLE);
//   progress-thread-refused   and without MULTIPLE: refused, naming the thread level.
//   placement [NxM]   the transport discovers where the ranks run (default one node: 1xP;
//                     the emulated cluster: tests/cluster); a model with inter-node costs
//                     takes that placement (its allreduce and the node-aware ones equal
//                     MPI's), a model naming another placement is refused naming the first
//                     rank that differs, and every node-aware registry algorithm runs the
//                     grid's cases under the discovered placement against the reference.
//   fault-exit        rank 1 exits without a word: MPI (not optcoll) then ends the job; the
//                     test asserts that mpirun returns a failure instead of hanging.
//   fault-size        rank 1 runs the schedule for a larger count: a receiver must report the
//                     wrong size (peer, seq, both sizes); every other rank fails within the
//                     timeout.
//   slices            several-slice messages (SendSlices / RecvSlices: tests/testing/
//                     slice_patterns.h's random allgathers with empty slices, zero totals and
//                     receive slices out of buffer order) on real data: by plain MPI they go
//                     through the transport's derived datatypes, with OPTCOLL_SHM_MIN_BYTES=0
//                     through the same-node channel; rank 0 prints the summary.
//   large-reductions  reductions of several same-node chunks (up to 560 KB) by every
//                     registry algorithm of allreduce, reduce, reduce_scatter_block and scan,
//                     sums and non-commutative products: the receiver combines each chunk as
//                     it arrives; rank 0 prints the summary.
//   multicast         the same-node channel (needs >= 3 ranks on one node): one buffer sent
//                     to several ranks is copied into the sender's arena once, blocks come
//                     back once every receiver is done, every receiver gets the right bytes.
// Exit status 0 when every rank saw what it should (combined with MPI_Allreduce).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <mpi.h>

#include "optcoll/algorithms/registry.h"
#include "optcoll/api/communicator.h"
#include "optcoll/exec/executor.h"
#include "optcoll/exec/in_flight.h"
#include "optcoll/exec/mpi/mpi_transport.h"
#include "optcoll/model/error.h"
#include "tests/exec/exec_helpers.h"
#include "tests/testing/reference.h"
#include "tests/testing/registry_cases.h"
#include "tests/testing/slice_patterns.h"

namespace optcoll {
namespace {

using namespace testing;  // NOLINT(google-build-using-namespace)

// Runs one case on `transport`; "" when this rank's output matches the reference.
std::string run_case(mpi::MpiTransport& transport, const RegistryCase& c, std::uint32_t epoch,
                     const CostModel& model = {}) {
  const Schedule schedule = algorithms::build(*c.algorithm, c.spec, {}, model);
  const bool matrices = !c.spec.commutative;
  const Datatype type = matrices ? mat2_type() : Datatype::int64();
  const ReduceOp op = matrices ? mat2_product() : ReduceOp::builtin("sum", type);
  const auto inputs = make_contributions(
      c.spec, type.bytes, matrices ? fill_mat2(epoch) : fill_integers<std::int64_t>(epoch));
  const auto expected =
      reference_outputs(c.spec, type.bytes, inputs,
                        matrices ? ElementCombine(mat2_multiply) : combine_sum<std::int64_t>());
  const Layout layout(c.spec);
  const auto me = static_cast<std::size_t>(transport.rank());
  Bytes output(static_cast<std::size_t>(layout.output_count(transport.rank())) * type.bytes,
               kPoison);
  Bytes input;
  if (c.spec.kind == CollectiveKind::kBcast) {
    if (transport.rank() == c.spec.root) output = inputs[me];
  } else {
    input = inputs[me];
  }
  ExecOptions options;
  options.timeout = std::chrono::seconds(60);
  options.epoch = epoch;
  execute(schedule, transport, {input, output}, type, op, options);
  if (output != expected[me]) return c.name + ": wrong output on rank " + std::to_string(me);
  return "";
}

// Runs `run_one` on every case (its problem, or "" when right; an exception is a problem
// too), prints the first problems, stops after a transport failure; returns the failures
// summed over every rank.
int failures_over(const std::vector<RegistryCase>& cases,
                  const std::function<std::string(const RegistryCase&)>& run_one) {
  int failures = 0;
  for (const auto& c : cases) {
    std::string problem;
    try {
      problem = run_one(c);
    } catch (const std::exception& e) {
      problem = c.name + ": " + e.what();
    }
    if (!problem.empty()) {
      if (failures < 10) std::fprintf(stderr, "FAIL %s\n", problem.c_str());
      ++failures;
      if (problem.find("transport failed earlier") != std::string::npos) break;
    }
  }
  int total = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  return total;
}

// The transport of the grids: the environment's settings (read by the constructor, which
// agrees on them with the other ranks: a malformed one fails every rank); with `rings`, the
// eager rings also where the ranks outnumber the CPUs (the grid's small messages through them
// on any machine).
std::unique_ptr<mpi::MpiTransport> grid_transport(bool rings) {
  if (!rings) return std::make_unique<mpi::MpiTransport>(MPI_COMM_WORLD);
  auto options = mpi::MpiTransport::Options::from_environment();
  options.rings = mpi::MpiTransport::Options::Rings::kAlways;
  return std::make_unique<mpi::MpiTransport>(MPI_COMM_WORLD, options);
}

// Runs every case on `transport` (failures_over); rank 0 prints "mpi WHAT p=P: N cases, F
// failures". Exit status 0 when no rank failed.
int run_cases(mpi::MpiTransport& transport, const std::vector<RegistryCase>& cases,
              const char* what) {
  std::uint32_t epoch = 0;
  const int total =
      failures_over(cases, [&](const RegistryCase& c) { return run_case(transport, c, epoch++); });
  if (transport.rank() == 0) {
    std::printf("mpi %s p=%d: %zu cases, %d failures\n", what, transport.size(), cases.size(),
                total);
  }
  return total == 0 ? 0 : 1;
}

int run_grid(bool rings) {
  const auto owned = grid_transport(rings);
  return run_cases(*owned, registry_cases({owned->size()}), "grid");
}

// Reductions whose messages take several of the same-node channel's 64 KiB chunks, which the
// receiver combines as the sender writes them (MpiTransport::copy_out): every registry
// algorithm of allreduce, reduce (roots 0 and p - 1), reduce_scatter_block and scan, with
// int64 sums of 70,001 elements (a block of 23,335 for reduce_scatter_block) and
// non-commutative 2x2 matrix products of 9,001 (32-byte elements), against the reference.
int run_large_reductions() {
  mpi::MpiTransport transport(MPI_COMM_WORLD);
  const Rank size = transport.size();
  std::vector<RegistryCase> cases;
  for (const CollectiveKind kind : {CollectiveKind::kAllreduce, CollectiveKind::kReduce,
                                    CollectiveKind::kReduceScatterBlock, CollectiveKind::kScan}) {
    for (const bool commutative : {true, false}) {
      const Count count = kind == CollectiveKind::kReduceScatterBlock
                              ? (commutative ? 23335 : 3001)
                              : (commutative ? 70001 : 9001);
      std::vector<Rank> roots{0};
      if (kind == CollectiveKind::kReduce && size > 1) roots.push_back(size - 1);
      for (const Rank root : roots) {
        for (const auto* info : algorithms::algorithms_for(kind)) {
          RegistryCase c;
          c.algorithm = info;
          c.spec = make_spec(kind, size, count, root);
          c.spec.commutative = commutative;
          if (algorithms::why_not(*info, c.spec, algorithms::resolve_params(*info, {}))) continue;
          c.name = std::string(info->name) + (commutative ? " sum" : " matrices") + " root " +
                   std::to_string(root);
          cases.push_back(std::move(c));
        }
      }
    }
  }
  return run_cases(transport, cases, "large reductions");
}

// The slice patterns at the world's size over several counts (through the ring, eager and
// rendezvous sizes of the MPI library, and the same-node channel's threshold when set).
int run_slices() {
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  mpi::MpiTransport transport(MPI_COMM_WORLD);
  const Datatype type = Datatype::int64();
  const ReduceOp& op = ReduceOp::builtin("sum", type);
  std::uint32_t epoch = 0;
  int failures = 0;
  int cases = 0;
  for (const Count count : {0, 1, 9, 300, 5000, 40000}) {
    for (std::uint64_t seed = 0; seed < 4; ++seed) {
      const auto c =
          slice_pattern_case(size, count, seed * 7919 + static_cast<std::uint64_t>(count));
      const auto me = static_cast<std::size_t>(rank);
      const auto& in = c.inputs[me];
      Bytes input(in.size() * sizeof(std::int64_t));
      if (!input.empty()) std::memcpy(input.data(), in.data(), input.size());
      Bytes output(c.expected[me].size() * sizeof(std::int64_t), kPoison);
      ExecOptions options;
      options.timeout = std::chrono::seconds(60);
      options.epoch = epoch++;
      std::string problem;
      try {
        execute(c.schedule, transport, {input, output}, type, op, options);
        Bytes expected(output.size());
        if (!expected.empty()) std::memcpy(expected.data(), c.expected[me].data(), expected.size());
        problem = first_difference(output, expected, sizeof(std::int64_t));
      } catch (const std::exception& e) {
        problem = e.what();
      }
      ++cases;
      if (!problem.empty()) {
        if (failures < 10) {
          std::fprintf(stderr, "FAIL slices count %lld seed %llu rank %d: %s\n",
                       static_cast<long long>(count), static_cast<unsigned long long>(seed), rank,
                       problem.c_str());
        }
        ++failures;
      }
    }
  }
  int total = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) std::printf("mpi slices p=%d: %d cases, %d failures\n", size, cases, total);
  return total == 0 ? 0 : 1;
}

// This process's rank and the world's size; false (rank 0 says why) if the world has fewer
// than 3 ranks, which the fault and multicast cases need.
bool world_of_three_or_more(const char* what, int& rank, int& size) {
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size < 3 && rank == 0) std::fprintf(stderr, "%s: at least 3 ranks needed\n", what);
  return size >= 3;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

int run_fault(const std::string& given_mode) {
  int rank = 0;
  int size = 0;
  if (!world_of_three_or_more("the fault cases", rank, size)) return 1;
  constexpr auto kTimeout = std::chrono::milliseconds(2000);
  // fault-throw-large: fault-throw in a bcast of 320 KB from rank 1 (bcast/linear), rank 1
  // failing 300 ms late, so that a waiting rank's only outstanding receive is a same-node
  // message of several chunks when the notice comes (its polls must still look at it).
  // fault-{throw,stall,size}-small: blocks of 80 B (104 B: size), through the eager rings
  // (forced on), rank 1 throwing 300 ms late: the waits are for ring messages alone.
  const bool large = given_mode == "fault-throw-large";
  const bool small = given_mode.ends_with("-small");
  const std::string mode = large   ? "fault-throw"
                           : small ? given_mode.substr(0, given_mode.size() - 6)
                                   : given_mode;
  const auto spec = large   ? make_spec(CollectiveKind::kBcast, size, 40000, 1)
                    : small ? make_spec(CollectiveKind::kAllreduce, size, 10 * size)
                            : make_spec(CollectiveKind::kAllreduce, size, 600);
  const Datatype type = Datatype::int64();
  const ReduceOp op = ReduceOp::builtin("sum", type);
  bool ok = true;
  std::string outcome;
  {
    auto transport_settings = mpi::MpiTransport::Options::from_environment();
    if (small) transport_settings.rings = mpi::MpiTransport::Options::Rings::kAlways;
    mpi::MpiTransport transport(MPI_COMM_WORLD, transport_settings);
    ExecOptions options;
    options.timeout = kTimeout;
    const auto start = std::chrono::steady_clock::now();
    try {
      if (rank == 1 && mode == "fault-throw") {
        // (large: the others have been waiting a while when the notice comes)
        if (large || small) std::this_thread::sleep_for(std::chrono::milliseconds(300));
        transport.abort("rank 1: injected failure before the collective");
        outcome = "aborted";
      } else if (rank == 1 && mode == "fault-exit") {
        std::fflush(nullptr);
        std::_Exit(3);  // gone mid-run, without MPI_Finalize
      } else if (rank == 1 && mode == "fault-stall") {
        std::this_thread::sleep_for(3 * kTimeout);
        outcome = "stalled";
      } else {
        auto mine = spec;
        if (rank == 1 && mode == "fault-size") mine.count = spec.count + 3 * size;
        // (small: 13 elements of 8 bytes per block, still a ring message)
        const Schedule schedule =
            algorithms::build(large ? "bcast/linear" : "allreduce/ring", mine);
        const Execution program(schedule, rank);
        Bytes input(static_cast<std::size_t>(program.input_count()) * type.bytes, std::byte{1});
        Bytes output(static_cast<std::size_t>(program.output_count()) * type.bytes);
        execute(schedule, transport, {input, output}, type, op, options);
        outcome = "completed";
        if (rank != 1) ok = false;  // a healthy rank must not complete with a faulty peer
      }
    } catch (const TransportError& e) {
      const auto waited = std::chrono::steady_clock::now() - start;
      outcome = e.what();
      if (rank != 1) {
        if (waited > kTimeout + std::chrono::milliseconds(1500)) ok = false;
        if (mode == "fault-throw")
          ok = ok && contains(outcome, "rank 1 failed: rank 1: injected failure");
        if (mode == "fault-stall") ok = ok && contains(outcome, "waiting on");
        if (mode == "fault-size") {
          ok =
              ok && (contains(outcome, "bytes, expected") || contains(outcome, "larger than the") ||
                     contains(outcome, "waiting on") || contains(outcome, "failed:"));
        }
      }
    } catch (const std::exception& e) {
      outcome = std::string("unexpected error: ") + e.what();
      ok = false;
    }
    std::fprintf(stderr, "rank %d (%s): %s -> %s\n", rank, mode.c_str(), outcome.c_str(),
                 ok ? "as expected" : "WRONG");
    // Everyone waits here until the stalled rank is back, then the transports go.
    MPI_Barrier(MPI_COMM_WORLD);
  }
  int bad = ok ? 0 : 1;
  int total = 0;
  MPI_Allreduce(&bad, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (mode == "fault-size") {
    // Somebody must have named the wrong size itself, not only timed out.
    int named =
        contains(outcome, "bytes, expected") || contains(outcome, "larger than the") ? 1 : 0;
    int any = 0;
    MPI_Allreduce(&named, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (any == 0) total += 1;
  }
  if (rank == 0) std::printf("mpi %s p=%d: %s\n", mode.c_str(), size, total == 0 ? "ok" : "FAILED");
  return total == 0 ? 0 : 1;
}

// The bytes of message `which` of iteration `round` (sender rank 0), distinct per message.
std::vector<std::byte> multicast_bytes(int round, int which, std::size_t n) {
  std::vector<std::byte> bytes(n);
  for (std::size_t i = 0; i < n; ++i)
    bytes[i] = static_cast<std::byte>(
        (i * 131 + static_cast<std::size_t>(round) * 7 + static_cast<std::size_t>(which) * 59) &
        0xff);
  return bytes;
}

// Rank 0 sends one buffer to every other rank at once (the last rank combines it, the
// others receive it), a second buffer to rank 1, then the first buffer to rank 1 again after
// the first sends completed; 40 rounds through arenas of 256 KiB. The same buffer to several
// ranks must be copied into the arena once, the later send of it once more, and every block
// must come back (else the arena fills and later messages fall back to plain MPI, copying
// in less); every receiver checks its bytes.
int run_multicast() {
  int rank = 0;
  int size = 0;
  if (!world_of_three_or_more("the multicast case", rank, size)) return 1;
  constexpr std::size_t kShared = std::size_t{64} << 10;
  constexpr std::size_t kOther = std::size_t{8} << 10;
  constexpr int kRounds = 40;
  constexpr auto kTimeout = std::chrono::milliseconds(20000);
  mpi::MpiTransport::Options options;
  options.shm_bytes = std::size_t{256} << 10;
  options.shm_min_bytes = 0;
  int problems = 0;
  auto problem = [&](const std::string& what) {
    if (problems++ < 10) std::fprintf(stderr, "rank %d: %s\n", rank, what.c_str());
  };
  {
    mpi::MpiTransport transport(MPI_COMM_WORLD, options);
    auto wait_all = [&](std::size_t requests) {
      std::vector<RequestId> done;
      while (done.size() < requests) {
        const std::size_t before = done.size();
        transport.wait_some(kTimeout, done);
        if (done.size() == before) throw Error(ErrorCode::kTransport, "multicast round stalled");
      }
    };
    std::uint64_t expected_copied = 0;
    for (int round = 0; round < kRounds; ++round) {
      const auto epoch = static_cast<std::uint32_t>(round);
      const auto shared = multicast_bytes(round, 0, kShared);
      const auto other = multicast_bytes(round, 1, kOther);
      if (rank == 0) {
        for (Rank to = 1; to < size; ++to) transport.isend(to, {epoch, 0}, shared);
        transport.isend(1, {epoch, 1}, other);
        wait_all(static_cast<std::size_t>(size));
        transport.isend(1, {epoch, 2}, shared);
        wait_all(1);
        expected_copied += 2 * kShared + kOther;
        if (transport.arena_bytes_copied_in() != expected_copied) {
          problem("round " + std::to_string(round) + ": copied " +
                  std::to_string(transport.arena_bytes_copied_in()) +
                  " bytes into the arena, expected " + std::to_string(expected_copied));
        }
      } else if (rank == size - 1) {
        std::vector<std::byte> sum(kShared, std::byte{1});
        transport.irecv_reduce(0, {epoch, 0}, kShared, [&](std::span<const std::byte> in) {
          for (std::size_t i = 0; i < in.size(); ++i)
            sum[i] =
                static_cast<std::byte>(std::to_integer<int>(sum[i]) + std::to_integer<int>(in[i]));
        });
        wait_all(1);
        for (std::size_t i = 0; i < kShared; ++i) {
          if (std::to_integer<int>(sum[i]) != ((std::to_integer<int>(shared[i]) + 1) & 0xff)) {
            problem("round " + std::to_string(round) + ": wrong sum at byte " + std::to_string(i));
            break;
          }
        }
      } else {
        std::vector<std::byte> got(kShared);
        std::vector<std::byte> got_other(rank == 1 ? kOther : 0);
        std::vector<std::byte> got_again(rank == 1 ? kShared : 0);
        transport.irecv(0, {epoch, 0}, got);
        if (rank == 1) {
          transport.irecv(0, {epoch, 1}, got_other);
          transport.irecv(0, {epoch, 2}, got_again);
        }
        wait_all(rank == 1 ? 3 : 1);
        if (got != shared) problem("round " + std::to_string(round) + ": wrong shared bytes");
        if (rank == 1 && got_other != other)
          problem("round " + std::to_string(round) + ": wrong second message");
        if (rank == 1 && got_again != shared)
          problem("round " + std::to_string(round) + ": wrong repeated message");
      }
      MPI_Barrier(MPI_COMM_WORLD);  // every block read: the next round's allocations reclaim
    }
  }
  int total = 0;
  MPI_Allreduce(&problems, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) std::printf("mpi multicast p=%d: %d problems\n", size, total);
  return total == 0 ? 0 : 1;
}

int run_communicator() {
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const auto p = static_cast<std::size_t>(size);
  int mismatches = 0;
  auto expect_same = [&](const char* what, const std::vector<std::int64_t>& ours,
                         const std::vector<std::int64_t>& theirs) {
    if (ours != theirs) {
      std::fprintf(stderr, "rank %d: %s differs from MPI's\n", rank, what);
      ++mismatches;
    }
  };
  // Without a model a Communicator on one node (this machine) plans with the MPI backend's
  // one-node default: the node's processors, the channel's threshold (16 KiB by default, none
  // without the channel).
  const unsigned cpus = std::thread::hardware_concurrency();
  for (const bool channel : {true, false}) {
    mpi::MpiTransport::Options options;
    options.shared_memory = channel;
    mpi::MpiTransport transport(MPI_COMM_WORLD, options);
    Communicator comm(transport, std::make_shared<PlanCache>());
    const CostModel& model = comm.model();
    const bool ok =
        model.cores == std::optional<int>(static_cast<int>(cpus)) &&
        model.rendezvous_max_bytes ==
            (channel ? std::optional<std::size_t>(16384) : std::optional<std::size_t>()) &&
        model.send_mode == (channel ? SendMode::kShared : SendMode::kPort) &&
        model == mpi_node_model(static_cast<int>(cpus),
                                channel ? std::optional<std::size_t>(16384) : std::nullopt);
    if (!ok) {
      std::fprintf(stderr, "rank %d: the default model (channel %d) is not the one-node one: %s\n",
                   rank, channel ? 1 : 0, cost_model_to_json(model).c_str());
      ++mismatches;
    }
  }
  {
    mpi::MpiTransport transport(MPI_COMM_WORLD);
    Communicator comm(transport, std::make_shared<PlanCache>());
    for (int round = 0; round < 3; ++round) {
      const std::size_t n = 1000 + 37 * static_cast<std::size_t>(round);
      std::vector<std::int64_t> in(n);
      for (std::size_t i = 0; i < n; ++i)
        in[i] = (rank + 1) * 1000003 + static_cast<std::int64_t>(i) * (round + 3);
      std::vector<std::int64_t> ours(n);
      std::vector<std::int64_t> theirs(n);
      comm.allreduce<std::int64_t>(in, ours, "sum");
      MPI_Allreduce(in.data(), theirs.data(), static_cast<int>(n), MPI_INT64_T, MPI_SUM,
                    MPI_COMM_WORLD);
      expect_same("allreduce", ours, theirs);

      const int root = size > 1 ? 1 : 0;
      ours = in;
      theirs = in;
      comm.bcast<std::int64_t>(ours, root);
      MPI_Bcast(theirs.data(), static_cast<int>(n), MPI_INT64_T, root, MPI_COMM_WORLD);
      expect_same("bcast", ours, theirs);

      std::vector<Count> counts(p);
      std::vector<int> mpi_counts(p);
      std::vector<int> displs(p);
      int total = 0;
      for (std::size_t r = 0; r < p; ++r) {
        counts[r] =
            static_cast<Count>((r * 7 + static_cast<std::size_t>(round)) % 5 == 0 ? 0 : 3 + r * 11);
        mpi_counts[r] = static_cast<int>(counts[r]);
        displs[r] = total;
        total += mpi_counts[r];
      }
      const auto mine = static_cast<std::size_t>(counts[static_cast<std::size_t>(rank)]);
      std::vector<std::int64_t> block(in.begin(), in.begin() + static_cast<std::ptrdiff_t>(mine));
      std::vector<std::int64_t> gathered(rank == 0 ? static_cast<std::size_t>(total) : 0);
      std::vector<std::int64_t> mpi_gathered(gathered.size());
      comm.gatherv<std::int64_t>(block, gathered, counts, 0);
      MPI_Gatherv(block.data(), static_cast<int>(mine), MPI_INT64_T, mpi_gathered.data(),
                  mpi_counts.data(), displs.data(), MPI_INT64_T, 0, MPI_COMM_WORLD);
      expect_same("gatherv", gathered, mpi_gathered);
      std::fill(gathered.begin(), gathered.end(), -1);
      comm.gatherv_own_counts<std::int64_t>(block, gathered, 0);  // MPI semantics
      expect_same("gatherv_own_counts", gathered, mpi_gathered);
      std::vector<std::int64_t> back(mine);
      std::vector<std::int64_t> mpi_back(mine);
      comm.scatterv_root_counts<std::int64_t>(
          mpi_gathered, back, rank == 0 ? std::span<const Count>(counts) : std::span<const Count>(),
          0);
      MPI_Scatterv(mpi_gathered.data(), mpi_counts.data(), displs.data(), MPI_INT64_T,
                   mpi_back.data(), static_cast<int>(mine), MPI_INT64_T, 0, MPI_COMM_WORLD);
      expect_same("scatterv_root_counts", back, mpi_back);

      std::vector<std::int64_t> all(n * p);
      std::vector<std::int64_t> mpi_all(n * p);
      comm.allgather<std::int64_t>(in, all);
      MPI_Allgather(in.data(), static_cast<int>(n), MPI_INT64_T, mpi_all.data(),
                    static_cast<int>(n), MPI_INT64_T, MPI_COMM_WORLD);
      expect_same("allgather", all, mpi_all);

      std::vector<std::int64_t> row(n * p);
      for (std::size_t i = 0; i < row.size(); ++i)
        row[i] = rank * 100000 + static_cast<std::int64_t>(i);
      comm.alltoall<std::int64_t>(row, all);
      MPI_Alltoall(row.data(), static_cast<int>(n), MPI_INT64_T, mpi_all.data(),
                   static_cast<int>(n), MPI_INT64_T, MPI_COMM_WORLD);
      expect_same("alltoall", all, mpi_all);

      std::vector<std::int64_t> part(n);
      std::vector<std::int64_t> mpi_part(n);
      comm.reduce_scatter_block<std::int64_t>(row, part, "sum");
      MPI_Reduce_scatter_block(row.data(), mpi_part.data(), static_cast<int>(n), MPI_INT64_T,
                               MPI_SUM, MPI_COMM_WORLD);
      expect_same("reduce_scatter_block", part, mpi_part);

      comm.scan<std::int64_t>(in, ours, "sum");
      MPI_Scan(in.data(), theirs.data(), static_cast<int>(n), MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
      expect_same("scan", ours, theirs);
      comm.scan<std::int64_t>(in, ours, "max");
      MPI_Scan(in.data(), theirs.data(), static_cast<int>(n), MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
      expect_same("scan max", ours, theirs);
      // MPI_Exscan leaves rank 0's buffer undefined (optcoll: untouched): compare the others.
      comm.exscan<std::int64_t>(in, ours, "sum");
      MPI_Exscan(in.data(), theirs.data(), static_cast<int>(n), MPI_INT64_T, MPI_SUM,
                 MPI_COMM_WORLD);
      if (rank > 0) expect_same("exscan", ours, theirs);
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
  int total = 0;
  MPI_Allreduce(&mismatches, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) std::printf("mpi communicator p=%d: %d mismatches\n", size, total);
  return total == 0 ? 0 : 1;
}

// One case's data on this rank, for the in-flight grid.
struct CaseRun {
  Bytes input;
  Bytes output;
  Bytes expected;
};

CaseRun case_run(const RegistryCase& c, Rank me, const Datatype& type, std::uint64_t salt) {
  const bool matrices = !c.spec.commutative;
  const auto inputs = make_contributions(
      c.spec, type.bytes, matrices ? fill_mat2(salt) : fill_integers<std::int64_t>(salt));
  const auto expected =
      reference_outputs(c.spec, type.bytes, inputs,
                        matrices ? ElementCombine(mat2_multiply) : combine_sum<std::int64_t>());
  const Layout layout(c.spec);
  const auto i = static_cast<std::size_t>(me);
  CaseRun run;
  run.expected = expected[i];
  run.output.assign(static_cast<std::size_t>(layout.output_count(me)) * type.bytes, kPoison);
  if (c.spec.kind == CollectiveKind::kBcast) {
    if (me == c.spec.root) run.output = inputs[i];
  } else {
    run.input = inputs[i];
  }
  return run;
}

constexpr int kAtOnce = 3;

// One case kAtOnce times at once on `transport` (epochs from `epoch` on); "" when every run's
// output on this rank matches the reference.
std::string run_case_in_flight(mpi::MpiTransport& transport, const RegistryCase& c,
                               std::uint32_t& epoch) {
  const Rank rank = transport.rank();
  const Schedule schedule = algorithms::build(*c.algorithm, c.spec);
  const bool matrices = !c.spec.commutative;
  const Datatype type = matrices ? mat2_type() : Datatype::int64();
  const ReduceOp op = matrices ? mat2_product() : ReduceOp::builtin("sum", type);
  std::vector<CaseRun> runs;
  std::vector<std::unique_ptr<Execution>> executions;
  CollectivesInFlight in_flight(transport);
  std::vector<CollectivesInFlight::Handle> handles;
  runs.reserve(kAtOnce);
  for (int k = 0; k < kAtOnce; ++k) {
    runs.push_back(case_run(c, rank, type, epoch));
    executions.push_back(std::make_unique<Execution>(schedule, rank));
    ExecOptions options;
    options.timeout = std::chrono::seconds(60);
    options.epoch = epoch++;
    CaseRun& r = runs.back();
    handles.push_back(in_flight.start(*executions.back(), {r.input, r.output}, type, op, options));
  }
  for (int k = kAtOnce - 1; k >= 0; --k) in_flight.wait(*handles[static_cast<std::size_t>(k)]);
  for (int k = 0; k < kAtOnce; ++k) {
    const CaseRun& r = runs[static_cast<std::size_t>(k)];
    if (r.output != r.expected) {
      return c.name + ": wrong output of run " + std::to_string(k) + " on rank " +
             std::to_string(rank);
    }
  }
  return "";
}

int run_in_flight_grid(bool rings) {
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const auto owned = grid_transport(rings);
  mpi::MpiTransport& transport = *owned;
  transport.expect_overlapping_calls();
  const auto cases = registry_cases({size});
  std::uint32_t epoch = 0;
  const int total = failures_over(
      cases, [&](const RegistryCase& c) { return run_case_in_flight(transport, c, epoch); });
  if (rank == 0) {
    std::printf("mpi in-flight grid p=%d: %zu cases x %d at once, %d failures\n", size,
                cases.size(), kAtOnce, total);
  }
  return total == 0 ? 0 : 1;
}

int run_nonblocking(bool progress_thread) {
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const auto p = static_cast<std::size_t>(size);
  int mismatches = 0;
  auto expect_same = [&](const std::string& what, const std::vector<std::int64_t>& ours,
                         const std::vector<std::int64_t>& theirs) {
    if (ours != theirs) {
      std::fprintf(stderr, "rank %d: %s differs from MPI's\n", rank, what.c_str());
      ++mismatches;
    }
  };
  {
    mpi::MpiTransport transport(MPI_COMM_WORLD);
    CommOptions options;
    options.progress_thread = progress_thread;
    Communicator comm(transport, std::make_shared<PlanCache>(), options);
    // Skewed gatherv counts; the persistent request is made once, started every round.
    std::vector<Count> counts(p);
    std::vector<int> mpi_counts(p);
    std::vector<int> displs(p);
    int total = 0;
    for (std::size_t r = 0; r < p; ++r) {
      counts[r] = r == p - 1 ? 5000 : static_cast<Count>(3 + r);
      mpi_counts[r] = static_cast<int>(counts[r]);
      displs[r] = total;
      total += mpi_counts[r];
    }
    const auto mine = static_cast<std::size_t>(counts[static_cast<std::size_t>(rank)]);
    std::vector<std::int64_t> block(mine);
    std::vector<std::int64_t> gathered(rank == 0 ? static_cast<std::size_t>(total) : 0);
    Request gatherv = comm.gatherv_init<std::int64_t>(block, gathered, counts, 0);
    for (int round = 0; round < 4; ++round) {
      const std::size_t n = 20000 + 37 * static_cast<std::size_t>(round);
      std::vector<std::int64_t> in(n);
      for (std::size_t i = 0; i < n; ++i)
        in[i] = (rank + 1) * 1000003 + static_cast<std::int64_t>(i) * (round + 3);
      for (std::size_t i = 0; i < mine; ++i)
        block[i] = rank * 7919 + round * 31 + static_cast<std::int64_t>(i);
      std::vector<std::int64_t> sum(n), max(n), bcast = in, all(n * p);
      const int root = size > 1 ? 1 : 0;
      std::vector<Request> requests;
      requests.push_back(comm.iallreduce<std::int64_t>(in, sum, "sum"));
      gatherv.start();
      requests.push_back(comm.ibcast<std::int64_t>(bcast, root));
      requests.push_back(comm.iallreduce<std::int64_t>(in, max, "max"));
      // A blocking collective among them.
      std::vector<std::int64_t> blocking(n);
      comm.allreduce<std::int64_t>(in, blocking, "sum");
      requests.push_back(comm.iallgather<std::int64_t>(in, all));
      std::reverse(requests.begin(), requests.end());
      wait_all(requests);
      gatherv.wait();

      std::vector<std::int64_t> theirs(n);
      MPI_Allreduce(in.data(), theirs.data(), static_cast<int>(n), MPI_INT64_T, MPI_SUM,
                    MPI_COMM_WORLD);
      expect_same("iallreduce sum", sum, theirs);
      expect_same("allreduce among requests", blocking, theirs);
      MPI_Allreduce(in.data(), theirs.data(), static_cast<int>(n), MPI_INT64_T, MPI_MAX,
                    MPI_COMM_WORLD);
      expect_same("iallreduce max", max, theirs);
      theirs = in;
      MPI_Bcast(theirs.data(), static_cast<int>(n), MPI_INT64_T, root, MPI_COMM_WORLD);
      expect_same("ibcast", bcast, theirs);
      std::vector<std::int64_t> mpi_all(n * p);
      MPI_Allgather(in.data(), static_cast<int>(n), MPI_INT64_T, mpi_all.data(),
                    static_cast<int>(n), MPI_INT64_T, MPI_COMM_WORLD);
      expect_same("iallgather", all, mpi_all);
      std::vector<std::int64_t> mpi_gathered(gathered.size());
      MPI_Gatherv(block.data(), static_cast<int>(mine), MPI_INT64_T, mpi_gathered.data(),
                  mpi_counts.data(), displs.data(), MPI_INT64_T, 0, MPI_COMM_WORLD);
      expect_same("persistent gatherv round " + std::to_string(round), gathered, mpi_gathered);
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
  int total = 0;
  MPI_Allreduce(&mismatches, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) {
    std::printf("mpi nonblocking%s p=%d: %d mismatches\n",
                progress_thread ? " with a progress thread" : "", size, total);
  }
  return total == 0 ? 0 : 1;
}

// Without MPI_THREAD_MULTIPLE a progress thread is refused, naming the thread level.
int run_progress_thread_refused() {
  mpi::MpiTransport transport(MPI_COMM_WORLD);
  CommOptions options;
  options.progress_thread = true;
  Communicator comm(transport, std::make_shared<PlanCache>(), options);
  std::vector<std::int64_t> in(4, 1), out(4);
  std::string error;
  try {
    Request r = comm.iallreduce<std::int64_t>(in, out, "sum");
  } catch (const Error& e) {
    error = e.what();
  }
  const int ok = contains(error, "MPI_THREAD_MULTIPLE") ? 0 : 1;
  if (ok != 0) std::fprintf(stderr, "no refusal, or not the expected one: '%s'\n", error.c_str());
  int failed = 0;
  MPI_Allreduce(&ok, &failed, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0 && failed == 0) std::printf("progress thread refused: %s\n", error.c_str());
  return failed == 0 ? 0 : 1;
}

// The placement MPI_Comm_split_type gives, and the models that use it.
int run_placement(std::string expected) {
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  mpi::MpiTransport transport(MPI_COMM_WORLD);
  std::vector<std::string> problems;
  const auto discovered = transport.placement();
  if (expected.empty()) expected = fmt::format("1x{}", size);
  if (!discovered || to_string(*discovered) != expected) {
    problems.push_back(fmt::format("placement {} (expected {})",
                                   discovered ? to_string(*discovered) : "none", expected));
  }
  CommOptions two_level;
  two_level.model = reference_cluster_model();
  two_level.model->inter_alpha = 1e-5;
  two_level.model->inter_beta = 1e-9;
  for (const char* algorithm : {"auto", "allreduce/node_aware", "allreduce/node_multileader"}) {
    two_level.algorithms["allreduce"] = algorithm;
    Communicator comm(transport, std::make_shared<PlanCache>(), two_level);
    if (!comm.model().placement || to_string(*comm.model().placement) != expected) {
      problems.emplace_back("the two-level model did not take the discovered placement");
    }
    std::vector<std::int64_t> in(777);
    for (std::size_t i = 0; i < in.size(); ++i)
      in[i] = (rank + 3) * 7919 + static_cast<std::int64_t>(i);
    std::vector<std::int64_t> ours(in.size());
    std::vector<std::int64_t> theirs(in.size());
    comm.allreduce<std::int64_t>(in, ours, "sum");
    MPI_Allreduce(in.data(), theirs.data(), static_cast<int>(in.size()), MPI_INT64_T, MPI_SUM,
                  MPI_COMM_WORLD);
    if (ours != theirs)
      problems.push_back(fmt::format("{}: allreduce differs from MPI's", algorithm));
  }
  // Every node-aware algorithm over the grid's cases, built for the discovered placement.
  CostModel levels = *two_level.model;
  levels.placement = discovered;
  std::vector<RegistryCase> cases;
  for (const auto& c : registry_cases({size})) {
    if (c.algorithm->short_name().starts_with("node_")) cases.push_back(c);
  }
  std::uint32_t epoch = 0;
  const int failures = failures_over(
      cases, [&](const RegistryCase& c) { return run_case(transport, c, epoch++, levels); });
  if (failures > 0) problems.push_back(fmt::format("{} node-aware cases failed", failures));
  if (rank == 0) std::printf("node-aware cases: %zu\n", cases.size());
  if (size >= 2 && expected != to_string(block_placement(size, 1))) {
    CommOptions elsewhere;
    elsewhere.model = reference_cluster_model();
    elsewhere.model->placement = block_placement(size, 1);
    std::string error;
    try {
      Communicator comm(transport, std::make_shared<PlanCache>(), elsewhere);
    } catch (const Error& e) {
      error = e.what();
    }
    const std::string wanted = fmt::format(
        "model placement {} differs from where the ranks run ({}): rank 1 is on node 0, the "
        "model says node 1",
        to_string(*elsewhere.model->placement), expected);
    if (error != wanted) problems.push_back("refusal: '" + error + "'");
  }
  for (const auto& problem : problems) std::fprintf(stderr, "rank %d: %s\n", rank, problem.c_str());
  const int mine = static_cast<int>(problems.size());
  int total = 0;
  MPI_Allreduce(&mine, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) std::printf("mpi placement p=%d: %d problems\n", size, total);
  return total == 0 ? 0 : 1;
}

}  // namespace
}  // namespace optcoll

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "grid";
  if (mode == "progress-thread") {
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  } else {
    MPI_Init(&argc, &argv);
  }
  int status = 1;
  try {
    status = mode == "grid"                      ? optcoll::run_grid(false)
             : mode == "grid-rings"              ? optcoll::run_grid(true)
             : mode == "communicator"            ? optcoll::run_communicator()
             : mode == "multicast"               ? optcoll::run_multicast()
             : mode == "slices"                  ? optcoll::run_slices()
             : mode == "large-reductions"        ? optcoll::run_large_reductions()
             : mode == "in-flight"               ? optcoll::run_in_flight_grid(false)
             : mode == "in-flight-rings"         ? optcoll::run_in_flight_grid(true)
             : mode == "nonblocking"             ? optcoll::run_nonblocking(false)
             : mode == "progress-thread"         ? optcoll::run_nonblocking(true)
             : mode == "progress-thread-refused" ? optcoll::run_progress_thread_refused()
             : mode == "placement"               ? optcoll::run_placement(argc > 2 ? argv[2] : "")
                                                 : optcoll::run_fault(mode);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
  }
  MPI_Finalize();
  return status;
}
