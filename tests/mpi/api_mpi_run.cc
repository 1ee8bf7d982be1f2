// SPDX-License-Identifier: Apache-2.0
// File: the API's MPI calls (optcoll/api/mpi/, library optcoll_api_mpi) called directly, as
// a program that is not the CLI would: ctest registers `mpirun -np P api_mpi_run` (P = 1..3).
//
//   before MPI_Init   run_checked_on_mpi and mpi_world_size refuse, naming themselves and
//                     saying that MPI is not initialized (the library never calls MPI_Init);
//   checked runs      real schedules (the registry's and the planner's choice for a
//                     non-commutative reduction) run by run_checked_on_mpi: every process
//                     gets correct == true, no mismatches, `rounds` positive times whose
//                     median is the result's, "P MPI process(es)", and the same verdict and
//                     median as every other process (compared with MPI_Allreduce);
//   wrong rank count  a schedule for P + 1 ranks is refused on every process, naming both;
//   after MPI_Finalize  mpi_world_rank refuses, saying that MPI is already finalized.
// Rank 0 prints "api mpi p=P: N checks, F failures", and every failed check is a FAIL line on
// stderr (the only word from the check after MPI_Finalize); exit status 0 when all passed.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <mpi.h>

#include "optcoll/algorithms/registry.h"
#include "optcoll/api/mpi/checked_run.h"
#include "optcoll/api/mpi/world.h"
#include "optcoll/api/reference.h"
#include "optcoll/model/error.h"
#include "optcoll/plan/select.h"

namespace optcoll {
namespace {

struct Tally {
  int checks = 0;
  int failures = 0;

  void expect(bool ok, const std::string& what) {
    ++checks;
    if (ok) return;
    ++failures;
    std::fprintf(stderr, "FAIL %s\n", what.c_str());
  }

  // `call` must throw Error(kInvalidArgument) whose text contains `fragment`.
  void expect_invalid(const std::function<void()>& call, const std::string& fragment,
                      const std::string& what) {
    std::string outcome = "no error";
    try {
      call();
    } catch (const Error& e) {
      const bool ok = e.code() == ErrorCode::kInvalidArgument &&
                      std::string(e.what()).find(fragment) != std::string::npos;
      outcome = ok ? "" : e.what();
    }
    expect(outcome.empty(),
           fmt::format("{}: expected an error with '{}', got: {}", what, fragment, outcome));
  }
};

// The middle of an odd number of `values`.
double median_of(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

// One checked run and what every process must see of it.
void check_run(Tally& tally, const std::string& name, const Schedule& schedule,
               const Datatype& scalar, const std::string& op) {
  const Rank p = mpi_world_size();
  const CheckedRunOptions options{3, 5, std::chrono::milliseconds(30000)};
  CheckedRun run;
  try {
    run = run_checked_on_mpi(schedule, scalar, op, options);
  } catch (const std::exception& e) {
    tally.expect(false, fmt::format("{}: {}", name, e.what()));
    return;
  }
  tally.expect(run.correct, name + ": not correct");
  tally.expect(run.mismatches.empty(), name + ": mismatches reported");
  tally.expect(run.seconds.size() == 5,
               fmt::format("{}: {} rounds timed, expected 5", name, run.seconds.size()));
  const bool positive =
      std::all_of(run.seconds.begin(), run.seconds.end(), [](double s) { return s > 0; });
  tally.expect(positive && run.median_seconds > 0, name + ": a time is not positive");
  tally.expect(!run.seconds.empty() && run.median_seconds == median_of(run.seconds),
               name + ": the median is not the rounds' median");
  const std::string ran_on = fmt::format("{} MPI process{}", p, p == 1 ? "" : "es");
  tally.expect(run.ran_on == ran_on, name + ": ran_on is '" + run.ran_on + "'");
  // Every process returns the same verdict and times.
  double lowest[2] = {run.median_seconds, run.correct ? 1.0 : 0.0};
  double highest[2] = {lowest[0], lowest[1]};
  MPI_Allreduce(MPI_IN_PLACE, lowest, 2, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, highest, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  tally.expect(lowest[0] == highest[0] && lowest[1] == highest[1],
               name + ": the processes disagree on the verdict or the median");
}

void check_runs(Tally& tally) {
  const Rank p = mpi_world_size();
  CollectiveSpec allreduce = make_spec(CollectiveKind::kAllreduce, p, 1000);
  allreduce.elem_bytes = 8;
  check_run(tally, "allreduce/ring int64 sum", algorithms::build("allreduce/ring", allreduce),
            Datatype::int64(), "sum");
  CollectiveSpec bcast = make_spec(CollectiveKind::kBcast, p, 3000, p - 1);
  bcast.elem_bytes = 8;
  check_run(tally, "bcast/binomial double from the last rank",
            algorithms::build("bcast/binomial", bcast), Datatype::float64(), "sum");
  // Rank order matters: 2x2 int64 matrices (32 B) multiplied, the planner's choice.
  CollectiveSpec reduce = make_spec(CollectiveKind::kReduce, p, 200, 0);
  reduce.elem_bytes = 32;
  reduce.commutative = false;
  const Plan planned = plan(reduce, CostModel{});
  check_run(tally, "reduce " + planned.algorithm + " matmul2", planned.schedule, Datatype::int64(),
            "matmul2");
  CollectiveSpec too_many = make_spec(CollectiveKind::kAllreduce, p + 1, 10);
  too_many.elem_bytes = 8;
  const Schedule wrong = algorithms::build("allreduce/ring", too_many);
  tally.expect_invalid(
      [&] { run_checked_on_mpi(wrong, Datatype::int64(), "sum", CheckedRunOptions{}); },
      fmt::format("the schedule has {} ranks but the transport {}", p + 1, p),
      "a schedule for one rank more than the world");
}

}  // namespace
}  // namespace optcoll

int main(int argc, char** argv) {
  using optcoll::Tally;
  Tally before;
  const optcoll::Schedule one = optcoll::algorithms::build(
      "allreduce/ring", optcoll::make_spec(optcoll::CollectiveKind::kAllreduce, 1, 4));
  before.expect_invalid(
      [&] {
        optcoll::run_checked_on_mpi(one, optcoll::Datatype::int32(), "sum",
                                    optcoll::CheckedRunOptions{});
      },
      "run_checked_on_mpi needs MPI initialized", "run_checked_on_mpi before MPI_Init");
  before.expect_invalid([] { optcoll::mpi_world_size(); }, "but MPI is not initialized",
                        "mpi_world_size before MPI_Init");
  MPI_Init(&argc, &argv);
  Tally during;
  optcoll::check_runs(during);
  int counts[2] = {before.checks + during.checks, before.failures + during.failures};
  MPI_Allreduce(MPI_IN_PLACE, counts, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (optcoll::mpi_world_rank() == 0) {
    std::printf("api mpi p=%d: %d checks, %d failures\n", optcoll::mpi_world_size(), counts[0],
                counts[1]);
  }
  MPI_Finalize();
  Tally after;
  after.expect_invalid([] { optcoll::mpi_world_rank(); }, "but MPI is already finalized",
                       "mpi_world_rank after MPI_Finalize");
  return counts[1] == 0 && after.failures == 0 ? 0 : 1;
}
