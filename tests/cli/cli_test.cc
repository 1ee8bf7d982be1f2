// SPDX-License-Identifier: Apache-2.0
// File: the optcoll binary end to end: JSON outputs carry what docs/design.md, Command line and
// tests, promises, and every kind of bad input is a clear message with exit status 2 (a failed
// check: 1).
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sched.h>

#include "optcoll/algorithms/registry.h"

namespace {

struct Result {
  int status = -1;
  std::string out;
  std::string err;
};

std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

class Cli : public ::testing::Test {
 public:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("optcoll_cli_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Runs `optcoll <args>` and captures its exit status, stdout and stderr.
  // `env`: variable assignments for the command ("NAME=value "), or "".
  Result run(const std::string& args, const std::string& env = "") {
    const auto out = dir_ / "stdout";
    const auto err = dir_ / "stderr";
    const std::string command = env + std::string(OPTCOLL_CLI_PATH) + " " + args + " >" +
                                out.string() + " 2>" + err.string();
    const int raw = std::system(command.c_str());
    Result r;
    r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
    r.out = slurp(out);
    r.err = slurp(err);
    return r;
  }

  std::string file(const std::string& name, const std::string& text) {
    const auto path = dir_ / name;
    std::ofstream(path) << text;
    return path.string();
  }

  void expect_usage_error(const std::string& args, const std::string& fragment) {
    const Result r = run(args);
    EXPECT_EQ(r.status, 2) << args << "\n" << r.err;
    EXPECT_NE(r.err.find(fragment), std::string::npos) << args << "\nstderr: " << r.err;
  }

  std::filesystem::path dir_;
};

// At p = 2 the fan-out (bcast/linear of the largest size) is one message, which port and
// receiver sends price alike unless the node's memory (node_beta) slows the port send's
// traffic: where they tie, the thread backend's own mode (receiver) is written, as at larger
// p where the fan-out tells them apart. Calibrations differ run to run, so it tries a few.
TEST_F(Cli, CalibrateOnTwoThreadsKeepsReceiverSendsOnATie) {
  const std::string model = (dir_ / "two.json").string();
  int ties = 0;
  for (int attempt = 0; attempt < 12 && ties < 2; ++attempt) {
    const Result r =
        run("calibrate --backend threads -p 2 --max-bytes 65536 --kernel-bytes 65536 "
            "--repetitions 3 --out " +
            model);
    ASSERT_EQ(r.status, 0) << r.err;
    std::map<std::string, double> makespan;
    for (const char* mode : {"port", "receiver"}) {
      const Result s = run("simulate bcast -p 2 --count 8192 --algorithm linear --json --model " +
                           model + " --send-mode " + mode);
      ASSERT_EQ(s.status, 0) << s.err;
      makespan[mode] = nlohmann::json::parse(s.out)["makespan"].get<double>();
    }
    if (makespan["port"] != makespan["receiver"]) continue;
    ++ties;
    EXPECT_EQ(nlohmann::json::parse(slurp(model))["send_mode"], "receiver");
  }
  if (ties == 0) GTEST_SKIP() << "no calibration of 12 priced the two modes alike here";
}

TEST_F(Cli, CalibrateWritesAModelThatPlanUses) {
  const std::string model = (dir_ / "model.json").string();
  const Result r =
      run("calibrate --backend threads -p 3 --max-bytes 4096 --kernel-bytes 65536 "
          "--repetitions 3 --json --out " +
          model);
  ASSERT_EQ(r.status, 0) << r.err;
  const auto out = nlohmann::json::parse(r.out);
  EXPECT_EQ(out["ping_pong"].size(), 6u);  // 8, 32, 128, 512, 2048, 4096
  EXPECT_EQ(out["exchange"].size(), 6u);   // the same sizes with all 3 ranks busy
  EXPECT_EQ(out["kernels"].size(), 16u);
  EXPECT_TRUE(out["model"]["per_byte"].get<bool>());
  EXPECT_GE(out["model"]["alpha"].get<double>(), 0.0);
  const auto written = nlohmann::json::parse(slurp(model));
  EXPECT_EQ(written, out["model"]);
  EXPECT_EQ(written["calibrated_ranks"], 3);  // every rank of the world it measured
  ASSERT_TRUE(out["model"].contains("send_gap"));
  EXPECT_GE(out["model"]["send_gap"].get<double>(), 0.0);
  // The burst bounds both ends' per-message costs: written as the receive gap too.
  EXPECT_EQ(out["model"]["receive_gap"], out["model"]["send_gap"]);
  // The threads of a world share this process's processors: written as the model's cores,
  // and the copy curve runs up to them (at most the 3 ranks).
  cpu_set_t allowed;
  ASSERT_EQ(sched_getaffinity(0, sizeof(allowed), &allowed), 0);
  EXPECT_EQ(out["model"]["cores"], CPU_COUNT(&allowed));
  EXPECT_EQ(out["copy_throughput"].size(), std::min<std::size_t>(3, CPU_COUNT(&allowed)));
  ASSERT_TRUE(out["model"].contains("node_beta"));
  EXPECT_GT(out["model"]["node_beta"].get<double>(), 0.0);
  // The thread backend's send modes: port or receiver, from above its eager size.
  const std::string mode = out["model"]["send_mode"];
  EXPECT_TRUE(mode == "port" || mode == "receiver") << mode;
  EXPECT_EQ(out["model"]["send_mode_min_bytes"], 4097);
  // Every fitted parameter has a finite value and fit error; the checks have predictions.
  std::set<std::string> fitted;
  for (const auto& f : out["fitted"]) {
    fitted.insert(f["parameter"].get<std::string>());
    EXPECT_TRUE(std::isfinite(f["value"].get<double>())) << f.dump();
    EXPECT_GE(f["fit_error"].get<double>(), 0.0) << f.dump();
  }
  for (const char* name :
       {"alpha", "beta", "copy", "gamma", "node_beta", "send_gap", "send_mode"}) {
    EXPECT_TRUE(fitted.contains(name)) << name;
  }
  EXPECT_EQ(out["checks"].size(), 6u + 2u);  // the exchanges, the fan-out, the reductions
  // What the thread backend's executor does beyond the ops: folded copies and in-place
  // combines always, shared copies (helped transfers) where its ranks spin.
  EXPECT_EQ(out["model"]["folds_copies"], true);
  EXPECT_EQ(out["model"]["combines_in_place"], true);
  const bool helped = out["model"].contains("helped_bytes");
  if (helped) {
    EXPECT_EQ(out["model"]["helped_bytes"], 262144);
  }
  // The file gives the same predictions as its numbers given as options.
  const Result p = run("plan allreduce -p 8 --count 1000 --json --model " + model);
  ASSERT_EQ(p.status, 0) << p.err;
  const auto& m = out["model"];
  const Result q =
      run("plan allreduce -p 8 --count 1000 --json --per-byte --alpha " + m["alpha"].dump() +
          " --beta " + m["beta"].dump() + " --gamma " + m["gamma"].dump() + " --copy " +
          m["copy"].dump() + " --send-gap " + m["send_gap"].dump() + " --receive-gap " +
          m["receive_gap"].dump() + " --cores " + m["cores"].dump() + " --node-beta " +
          m["node_beta"].dump() + " --send-mode " + mode + " --send-mode-min-bytes " +
          m["send_mode_min_bytes"].dump() + " --folds-copies --combines-in-place" +
          (helped ? " --helped-bytes " + m["helped_bytes"].dump() : std::string()));
  ASSERT_EQ(q.status, 0) << q.err;
  EXPECT_EQ(nlohmann::json::parse(p.out)["predicted_time"],
            nlohmann::json::parse(q.out)["predicted_time"]);
}

// Checked before MPI starts, so these run without mpirun.
TEST_F(Cli, TuneRejectsBadOptions) {
  const std::pair<std::string, std::string> cases[] = {
      {"tune", "tune needs -p of at least 2, got 0"},
      {"tune -p 2 --collectives teleport", "tune: unknown collective 'teleport'"},
      {"tune -p 2 --collectives gatherv", "tune: gatherv needs a distribution of its counts"},
      {"tune -p 2 --collectives bcast:spikes", "tune: bcast has regular counts"},
      {"tune -p 2 --collectives barrier", "tune: barrier is not tuned (it has no size)"},
      {"tune -p 2 --min-bytes 4", "tune: the sizes must run from at least 8 B up, got 4 .. "},
      {"tune -p 2 --factor 1", "tune: --factor must be at least 2, got 1"},
      {"tune -p 2 --rounds 0", "--rounds must be at least 1, got 0"},
      {"tune -p 2 --round-ms 0", "--round-ms must be positive, got 0"},
      {"tune -p 2 --max-calls 0", "--max-calls must be at least 1, got 0"},
      {"tune -p 2 --budget -1", "--budget must be >= 0 seconds, got -1"},
      {"tune -p 2 --dist-k 0", "--dist-k must be at least 1, got 0"},
      {"tune -p 2 --timeout 0", "--timeout must be at least 1 ms, got 0"},
      {"tune -p 2 --max-bytes 2G", "--max-bytes 2147483648 is above the limit of 1 GiB per rank"},
      {"tune -p 2 --out ''", "--out must name the table's file"},
      {"tune -p 2 --backend gpu", "unknown --backend 'gpu' (known: threads, mpi)"},
  };
  for (const auto& [args, message] : cases) {
    const Result r = run(args);
    EXPECT_EQ(r.status, 2) << args;
    EXPECT_NE(r.err.find(message), std::string::npos) << args << ": " << r.err;
  }
}

// optcoll tune writes a table that plan and run follow (decided_by says so), the report and
// charts; bad tables are refused with the entry named, and set-aside runs are warnings.
// export from a measured table: the Open MPI rule for allreduce at each measured size names
// the library algorithm whose registry relative ran fastest there (relatives per
// optcoll/plan/library_algorithms.cc, restated here for the ones allreduce has at p = 2).
TEST_F(Cli, ExportWritesTheFastestMeasuredLibraryAlgorithmAndRefusesAnotherP) {
  const std::string table = (dir_ / "t.json").string();
  const Result tuned =
      run("tune -p 2 --collectives allreduce --min-bytes 8 --max-bytes 64K --factor 64 "
          "--rounds 1 --max-calls 4 --out " +
          table);
  ASSERT_EQ(tuned.status, 0) << tuned.err;
  const std::map<std::string, int> ompi_id = {{"allreduce/linear", 1},
                                              {"allreduce/reduce_then_bcast", 2},
                                              {"allreduce/recursive_doubling", 3},
                                              {"allreduce/ring", 4},
                                              {"allreduce/ring_segmented", 5},
                                              {"allreduce/rabenseifner", 6}};
  std::map<std::uint64_t, int> expected;  // bytes -> Open MPI id
  const auto doc = nlohmann::json::parse(slurp(table));
  for (const auto& point : doc["points"]) {
    double best = 1e30;
    for (const auto& r : point["runs"]) {
      const auto id = ompi_id.find(r["algorithm"].get<std::string>());
      const bool plain =
          r["variant"].get<std::string>().empty() || r["algorithm"] == "allreduce/ring_segmented";
      // Open MPI runs its ring, segmented ring and Rabenseifner only from p elements up.
      const bool too_few =
          point["bytes"].get<std::uint64_t>() / 8 < 2 && id != ompi_id.end() && id->second >= 4;
      if (id == ompi_id.end() || !plain || too_few || r["seconds"].get<double>() >= best) continue;
      best = r["seconds"].get<double>();
      expected[point["bytes"].get<std::uint64_t>()] = id->second;
    }
  }
  ASSERT_EQ(expected.size(), 4u);  // 8 B, 512 B, 32 KiB, 64 KiB
  const std::string rules = (dir_ / "rules.conf").string();
  const Result exported = run("export --format ompi-rules -p 2 --collectives allreduce --tuning " +
                              table + " --out " + rules);
  ASSERT_EQ(exported.status, 0) << exported.err;
  EXPECT_NE(exported.out.find("chosen by the tuning table"), std::string::npos) << exported.out;
  // The rules: "key algorithm fanout segment" lines after the headers; the rule in force at
  // each measured size must name the expected id.
  std::vector<std::pair<std::uint64_t, int>> keyed;
  std::istringstream lines(slurp(rules));
  std::string line;
  std::vector<long> numbers;
  while (std::getline(lines, line)) {
    std::istringstream fields(line.substr(0, line.find('#')));
    long v = 0;
    while (fields >> v) numbers.push_back(v);
  }
  // 1 collective, id 2, 1 communicator size, p = 2, n rules of 4 numbers.
  ASSERT_GE(numbers.size(), 5u);
  EXPECT_EQ(numbers[0], 1);
  EXPECT_EQ(numbers[1], 2);
  EXPECT_EQ(numbers[3], 2);
  const auto n = static_cast<std::size_t>(numbers[4]);
  ASSERT_EQ(numbers.size(), 5 + 4 * n);
  for (std::size_t i = 0; i < n; ++i) {
    keyed.emplace_back(numbers[5 + 4 * i], static_cast<int>(numbers[6 + 4 * i]));
  }
  for (const auto& [bytes, id] : expected) {
    int in_force = -1;
    for (const auto& [key, alg] : keyed) {
      if (key <= bytes) in_force = alg;
    }
    EXPECT_EQ(in_force, id) << bytes << " B\n" << slurp(rules);
  }
  const Result other_p =
      run("export --format ompi-rules -p 4 --tuning " + table + " --out " + rules);
  EXPECT_EQ(other_p.status, 2);
  EXPECT_NE(other_p.err.find("the tuning table was measured at p = 2 only; ask for -p 2"),
            std::string::npos)
      << other_p.err;
}

TEST_F(Cli, TuneTablesDriveAutoAndBadOnesAreRefused) {
  const std::string table = (dir_ / "t.json").string();
  const Result tuned =
      run("tune -p 2 --collectives allreduce,bcast --max-bytes 64 --rounds 1 "
          "--max-calls 4 --out " +
          table + " --report " + (dir_ / "r.md").string() + " --svg " + (dir_ / "c").string());
  ASSERT_EQ(tuned.status, 0) << tuned.err;
  EXPECT_NE(tuned.out.find("Model-only auto: median"), std::string::npos) << tuned.out;
  EXPECT_NE(tuned.err.find("4/4"), std::string::npos) << tuned.err;  // the progress bar ends
  const auto doc = nlohmann::json::parse(slurp(table));
  EXPECT_EQ(doc["format"], "optcoll-tuning-1");
  EXPECT_EQ(doc["nranks"], 2);
  EXPECT_EQ(doc["points"].size(), 4u);  // 2 collectives x {8, 64} B
  EXPECT_NE(slurp(dir_ / "r.md").find("## Every run"), std::string::npos);
  EXPECT_NE(slurp(dir_ / "c-regret.svg").find("<svg"), std::string::npos);
  EXPECT_NE(slurp(dir_ / "c-model.svg").find("<svg"), std::string::npos);
  // The fastest run the table holds for allreduce at 64 B is what plan takes.
  std::string best;
  double best_seconds = 1e30;
  for (const auto& point : doc["points"]) {
    if (point["collective"] != "allreduce" || point["bytes"] != 64) continue;
    for (const auto& r : point["runs"]) {
      if (r["seconds"].get<double>() < best_seconds) {
        best_seconds = r["seconds"].get<double>();
        best = r["algorithm"];
      }
    }
  }
  ASSERT_FALSE(best.empty());
  const Result planned = run("plan allreduce -p 2 --count 8 --json --tuning " + table);
  ASSERT_EQ(planned.status, 0) << planned.err;
  const auto plan = nlohmann::json::parse(planned.out);
  EXPECT_EQ(plan["algorithm"], best);
  EXPECT_NE(plan["decided_by"].get<std::string>().find("the tuning table"), std::string::npos);
  const Result ran = run("run allreduce -p 2 --count 8 --json --tuning " + table);
  ASSERT_EQ(ran.status, 0) << ran.err;
  EXPECT_EQ(nlohmann::json::parse(ran.out)["algorithm"], best);
  const Result other_p = run("plan allreduce -p 3 --count 8 --tuning " + table);
  ASSERT_EQ(other_p.status, 0) << other_p.err;
  EXPECT_NE(other_p.out.find("the table was measured at p = 2, not 3"), std::string::npos);
  const Result explained = run("plan allreduce -p 2 --count 8 --explain --tuning " + table);
  EXPECT_NE(explained.out.find("the model alone would choose:"), std::string::npos);
  // Bad input.
  const Result explicit_algorithm = run("plan allreduce -p 2 --count 8 -a ring --tuning " + table);
  EXPECT_EQ(explicit_algorithm.status, 2);
  EXPECT_NE(explicit_algorithm.err.find("--tuning is for auto, not --algorithm ring"),
            std::string::npos);
  const Result best_root = run("plan bcast -p 2 --count 8 --root best --tuning " + table);
  EXPECT_EQ(best_root.status, 2);
  EXPECT_NE(best_root.err.find("--tuning and --root best"), std::string::npos);
  const Result malformed = run("plan bcast -p 2 --count 8 --tuning " + file("bad.json", "{"));
  EXPECT_EQ(malformed.status, 2);
  EXPECT_NE(malformed.err.find("tuning table is not valid JSON"), std::string::npos);
  nlohmann::json stale = doc;
  stale["points"][0]["runs"][0]["algorithm"] = "allreduce/teleport";
  const Result set_aside =
      run("plan allreduce -p 2 --count 1 --tuning " + file("stale.json", stale.dump()));
  EXPECT_EQ(set_aside.status, 0) << set_aside.err;
  EXPECT_NE(set_aside.err.find("warning: "), std::string::npos);
  EXPECT_NE(set_aside.err.find("points[0].runs[0]: algorithm \"allreduce/teleport\""),
            std::string::npos)
      << set_aside.err;
}

// A command that initializes MPI without mpirun (a singleton): under the sanitizers, with leak
// detection off, since Open MPI's singleton start leaves allocations of its own at exit.
#if defined(OPTCOLL_SANITIZED_BUILD)
constexpr const char* kMpiSingletonEnv = "ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 ";
#else
constexpr const char* kMpiSingletonEnv = "";
#endif

TEST_F(Cli, BenchRejectsBadOptions) {
  const std::pair<std::string, std::string> cases[] = {
      {"bench --collectives allreduce,teleport", "unknown collective 'teleport' for bench"},
      {"bench --dists spikes,lumpy", "unknown distribution 'lumpy'"},
      {"bench --min-bytes 4", "--min-bytes 4 must be at least 8"},
      {"bench --min-bytes 4096 --max-bytes 1024", "at most --max-bytes 1024"},
      {"bench --min-bytes 4K --max-bytes 1K", "--min-bytes 4096 must be at least 8 and at most"},
      {"bench --max-bytes -3", "--max-bytes: must be a byte count >= 0, got -3"},
      {"bench --max-bytes 2G", "is above the limit of 1 GiB per rank"},
      {"bench --factor 1", "--factor must be at least 2, got 1"},
      {"bench --iterations 0", "--iterations must be at least 1, got 0"},
      {"bench --format xml", "unknown --format 'xml' (known: markdown, csv)"},
      {"bench --model /nonexistent/model.json", "/nonexistent/model.json"},
      {"bench --rounds 0", "--rounds must be at least 1, got 0"},
      {"bench --dist-k 0", "--dist-k must be at least 1, got 0"},
      {"bench --algorithm allgather", "--algorithm 'allgather' must be collective=algorithm"},
      {"bench --algorithm allgather=teleport", "unknown algorithm 'teleport' for allgather"},
      {"bench --algorithm gossip=ring", "--algorithm 'gossip=ring': unknown collective 'gossip'"},
  };
  for (const auto& [args, message] : cases) {
    const Result r = run(args);
    EXPECT_EQ(r.status, 2) << args;
    EXPECT_NE(r.err.find(message), std::string::npos) << args << ": " << r.err;
  }
  // Without mpirun: one process, which would time copies.
  const Result alone = run("bench --collectives bcast --max-bytes 8", kMpiSingletonEnv);
  EXPECT_EQ(alone.status, 2) << alone.err;
  EXPECT_NE(alone.err.find("optcoll bench times collectives between MPI processes: start it "
                           "with mpirun -np 2 (or more); this run has 1 process"),
            std::string::npos)
      << alone.err;
}

TEST_F(Cli, CalibrateRejectsBadOptions) {
  const std::pair<std::string, std::string> cases[] = {
      {"calibrate --backend carrier-pigeon", "unknown --backend 'carrier-pigeon'"},
      {"calibrate --repetitions 0", "--repetitions must be at least 1"},
      {"calibrate --burst 1", "--burst must be at least 2, got 1"},
      {"calibrate --max-bytes 16", "at least 32 bytes"},
      {"calibrate --kernel-bytes 8", "--kernel-bytes must be at least 64"},
      {"calibrate --timeout 0", "--timeout must be at least 1 ms"},
      {"calibrate --fit cubic", "unknown fit 'cubic' (known: asymptotic, relative)"},
      // Checked before measuring: nothing is measured for a typo.
      {"calibrate --op xor", "unknown reduction operator 'xor' (known: sum, prod, min, max)"},
      {"calibrate --dtype complex", "unknown --dtype 'complex'"},
      {"calibrate --out /nonexistent/dir/m.json",
       "--out '/nonexistent/dir/m.json': the directory '/nonexistent/dir' does not exist"},
      {"calibrate --out /tmp", "--out '/tmp' is a directory"},
      {"calibrate -p 1", "calibrate needs -p of at least 2, got 1"},
  };
  for (const auto& [args, message] : cases) {
    const Result r = run(args);
    EXPECT_EQ(r.status, 2) << args;
    EXPECT_NE(r.err.find(message), std::string::npos) << args << ": " << r.err;
  }
}

// The options that the end of a calibration needs are checked before it measures (more than
// 10 s with these sizes; refused at once).
TEST_F(Cli, CalibrateChecksItsOptionsBeforeMeasuring) {
  const std::string slow = "calibrate --max-bytes 16M --repetitions 100 --kernel-bytes 268435456 ";
  const std::string existing_dir = dir_.string();
  const std::pair<std::string, std::string> cases[] = {
      {"--dtype int8", "unknown --dtype 'int8'"},
      {"--op xor", "unknown reduction operator 'xor'"},
      {"--out /nonexistent/dir/m.json", "the directory '/nonexistent/dir' does not exist"},
      {"--out " + existing_dir, "--out '" + existing_dir + "' is a directory"},
  };
  for (const auto& [args, message] : cases) {
    const auto start = std::chrono::steady_clock::now();
    const Result r = run(slow + args);
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
    EXPECT_EQ(r.status, 2) << args;
    EXPECT_NE(r.err.find(message), std::string::npos) << args << ": " << r.err;
    EXPECT_LT(took.count(), 3.0) << args << ": it measured first";
  }
  // A file that exists is checked, not truncated.
  const std::string kept = file("kept.json", "{\"alpha\": 1}\n");
  EXPECT_EQ(run(slow + "--op xor --out " + kept).status, 2);
  EXPECT_EQ(slurp(kept), "{\"alpha\": 1}\n");
}

// simulate --root best chooses the root as plan does: the same root, and a makespan equal
// to plan's prediction.
TEST_F(Cli, SimulateBestRootChoosesAsPlanDoes) {
  const std::string problem = "gatherv -p 16 --dist spikes --root best -a binomial --json";
  const Result planned = run("plan " + problem);
  const Result simulated = run("simulate " + problem);
  ASSERT_EQ(planned.status, 0) << planned.err;
  ASSERT_EQ(simulated.status, 0) << simulated.err;
  const auto p = nlohmann::json::parse(planned.out);
  const auto s = nlohmann::json::parse(simulated.out);
  EXPECT_NE(p["root"], 0);  // spikes: the best root is not rank 0
  EXPECT_EQ(s["root"], p["root"]);
  EXPECT_EQ(s["makespan"], p["predicted_time"]);
}

// A schedule file that the verifier rejects is simulated with the verifier's words as a
// warning; a correct one without.
TEST_F(Cli, SimulateWarnsAboutARacySchedule) {
  const std::string header =
      "optcoll-schedule 1\nalgorithm hand/racy\ncollective bcast\nnranks 2\nroot 0\n"
      "count 4\ncommutative true\nelem_bytes 8\nrank 0 scratch 0\n"
      "0 send 1 seq 0 out[0:+4]\n1 send 1 seq 1 out[0:+4]\nrank 1 scratch 0\n"
      "0 recv 0 seq 0 out[0:+4]\n";
  const Result racy =
      run("simulate --schedule " + file("racy.txt", header + "1 recv 0 seq 1 out[0:+4]\nend\n"));
  EXPECT_EQ(racy.status, 0) << racy.err;
  EXPECT_NE(racy.out.find("makespan"), std::string::npos) << racy.out;
  EXPECT_NE(racy.err.find("warning: optcoll verify rejects this schedule"), std::string::npos)
      << racy.err;
  EXPECT_NE(racy.err.find("race: rank 1: race on out[0]"), std::string::npos) << racy.err;
  const Result ordered =
      run("simulate --schedule " +
          file("ordered.txt", header + "1 recv 0 seq 1 out[0:+4] after 0\nend\n"));
  EXPECT_EQ(ordered.status, 0) << ordered.err;
  EXPECT_EQ(ordered.err, "");
}

// Within the limit, the estimate changes nothing.
TEST_F(Cli, PlansWithinTheMemoryLimitRun) {
  const Result r = run("plan bcast -p 100000 --count 4 -a binomial --max-memory 1G --json");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["ops"], 199998);
}

// Memory running out anyway (here: a process limit, with the estimate turned off) is exit
// status 3, naming what was being built, not status 2 "std::bad_alloc".
TEST_F(Cli, OutOfMemoryIsStatusThreeNamingWhatWasBuilt) {
#if defined(OPTCOLL_SANITIZED_BUILD)
  GTEST_SKIP() << "a sanitizer's runtime reserves more address space than the limit allows";
#endif
  const auto out = dir_ / "stdout";
  const auto err = dir_ / "stderr";
  const std::string command = "sh -c 'ulimit -v 400000 && exec " + std::string(OPTCOLL_CLI_PATH) +
                              " plan barrier -p 4194304 -a dissemination --max-memory 0' >" +
                              out.string() + " 2>" + err.string();
  const int raw = std::system(command.c_str());
  ASSERT_TRUE(WIFEXITED(raw));
  EXPECT_EQ(WEXITSTATUS(raw), 3);
  EXPECT_EQ(slurp(err).rfind("optcoll: out of memory while planning barrier p=4194304 with "
                             "dissemination (",
                             0),
            0U)
      << slurp(err);
}

TEST_F(Cli, VersionFlag) {
  const Result r = run("--version");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, std::string("optcoll ") + OPTCOLL_VERSION + "\n");
}

// One rank, one thread: said in the singular.
TEST_F(Cli, RunOnOneThreadSaysThread) {
  const Result r = run("run bcast -p 1 --count 4 --algorithm linear --iterations 1");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find(" on 1 thread\n"), std::string::npos) << r.out;
  const Result two = run("run bcast -p 2 --count 4 --algorithm linear --iterations 1");
  ASSERT_EQ(two.status, 0) << two.err;
  EXPECT_NE(two.out.find(" on 2 threads\n"), std::string::npos) << two.out;
}

TEST_F(Cli, ListJsonHasEveryRegistryAlgorithm) {
  const Result r = run("list --json");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  ASSERT_EQ(doc.size(), optcoll::algorithms::all_algorithms().size());
  for (const auto& entry : doc) {
    for (const char* key : {"name", "collective", "summary", "restrictions", "params"}) {
      EXPECT_TRUE(entry.contains(key)) << key;
    }
    EXPECT_NE(optcoll::algorithms::find_algorithm(entry["name"].get<std::string>()), nullptr);
  }
  const Result md = run("list --markdown");
  EXPECT_EQ(md.status, 0);
  EXPECT_NE(md.out.find("| `allreduce/ring` |"), std::string::npos);
  // docs/library_algorithms.md is generated from export's table and must not drift from it.
  const Result libraries = run("export --list");
  ASSERT_EQ(libraries.status, 0) << libraries.err;
  EXPECT_EQ(slurp(std::filesystem::path(OPTCOLL_SOURCE_DIR) / "docs" / "library_algorithms.md"),
            libraries.out)
      << "regenerate with: optcoll export --list > docs/library_algorithms.md";
  // docs/algorithms.md is generated from the registry and must not drift from it.
  EXPECT_EQ(slurp(std::filesystem::path(OPTCOLL_SOURCE_DIR) / "docs" / "algorithms.md"), md.out)
      << "regenerate with: optcoll list --markdown > docs/algorithms.md";
}

TEST_F(Cli, PlanJsonAndDumpedScheduleAgreeWithSimulate) {
  const std::string dump = (dir_ / "plan.txt").string();
  const Result r =
      run("plan gatherv -p 16 --dist spikes --block-size 100 --root 3 --abstract "
          "--alpha 100 --beta 1 --json --dump " +
          dump);
  ASSERT_EQ(r.status, 0) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  for (const char* key :
       {"collective", "algorithm", "p", "root", "predicted_time", "lower_bound", "candidates"}) {
    EXPECT_TRUE(doc.contains(key)) << key;
  }
  EXPECT_EQ(doc["collective"], "gatherv");
  EXPECT_EQ(doc["p"], 16);
  EXPECT_EQ(doc["root"], 3);
  EXPECT_LE(doc["lower_bound"].get<double>(), doc["predicted_time"].get<double>());
  if (doc.contains("tree")) {
    EXPECT_EQ(doc["tree"]["parent"].size(), 16u);
    EXPECT_EQ(doc["tree"]["parent"][3], -1);
  }
  const Result sim = run("simulate --schedule " + dump + " --abstract --alpha 100 --beta 1 --json");
  ASSERT_EQ(sim.status, 0) << sim.err;
  const auto s = nlohmann::json::parse(sim.out);
  EXPECT_EQ(s["makespan"], doc["predicted_time"]);
  EXPECT_EQ(s["rank_finish"].size(), 16u);
  EXPECT_FALSE(s["critical_path"].empty());
  const Result verify = run("verify --schedule " + dump + " --json");
  ASSERT_EQ(verify.status, 0) << verify.err;
  EXPECT_EQ(nlohmann::json::parse(verify.out)["ok"], true);
}

TEST_F(Cli, GapsLetALinearRootOverlapItsMessages) {
  // scatter/linear and gather/linear at p = 4, one element per rank: three transfers of
  // 100 + 1 from (into) the root. Without the gap at the root's end it takes them in turn
  // (303), whatever the other end's gap; with it (5) each holds the root's port for 5 + 1,
  // so the last starts at 12 and arrives at 113, and plan prefers linear over binomial (202).
  struct Case {
    std::string collective, gap, other_gap;
  };
  for (const Case& c : {Case{"scatter", "--send-gap 5", "--receive-gap 5"},
                        Case{"gather", "--receive-gap 5", "--send-gap 5"}}) {
    const std::string base = c.collective + " -p 4 --count 1 --abstract --alpha 100 --beta 1";
    const std::string linear = c.collective + "/linear";
    const Result without = run("simulate " + base + " --algorithm linear --json " + c.other_gap);
    ASSERT_EQ(without.status, 0) << without.err;
    EXPECT_EQ(nlohmann::json::parse(without.out)["makespan"], 303) << c.collective;
    const Result with = run("simulate " + base + " --algorithm linear --json " + c.gap);
    ASSERT_EQ(with.status, 0) << with.err;
    EXPECT_EQ(nlohmann::json::parse(with.out)["makespan"], 113) << c.collective;
    const Result plan_without = run("plan " + base + " --json");
    ASSERT_EQ(plan_without.status, 0) << plan_without.err;
    EXPECT_NE(nlohmann::json::parse(plan_without.out)["algorithm"], linear);
    const Result plan_with = run("plan " + base + " --json " + c.gap);
    ASSERT_EQ(plan_with.status, 0) << plan_with.err;
    EXPECT_EQ(nlohmann::json::parse(plan_with.out)["algorithm"], linear);
    EXPECT_EQ(nlohmann::json::parse(plan_with.out)["predicted_time"], 113) << c.collective;
  }
}

TEST_F(Cli, ScanAndExscanPlanVerifyAndRun) {
  // The brief's example: plan scan -p 7 --count 5 picks one of the scan algorithms, and the
  // dumped schedule verifies.
  const std::string dump = (dir_ / "scan.txt").string();
  const Result r = run("plan scan -p 7 --count 5 --json --dump " + dump);
  ASSERT_EQ(r.status, 0) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["collective"], "scan");
  EXPECT_EQ(doc["p"], 7);
  EXPECT_EQ(doc["algorithm"].get<std::string>().rfind("scan/", 0), 0u) << doc["algorithm"];
  EXPECT_LE(doc["lower_bound"].get<double>(), doc["predicted_time"].get<double>());
  const Result verify = run("verify --schedule " + dump + " --json");
  ASSERT_EQ(verify.status, 0) << verify.err;
  EXPECT_EQ(nlohmann::json::parse(verify.out)["ok"], true);
  for (const std::string args :
       {"run scan -p 7 --count 5 --op matmul2 --dtype int64 --algorithm recursive_doubling "
        "--json --iterations 2",
        "run exscan -p 6 --count 33 --op matmul2 --dtype int32 --algorithm recursive_doubling "
        "--json --iterations 2",
        "run exscan -p 5 --count 100 --algorithm linear --json",
        "run scan -p 9 --count 100 --reproducible --dtype float --json"}) {
    const Result ran = run(args);
    ASSERT_EQ(ran.status, 0) << args << "\n" << ran.err;
    EXPECT_EQ(nlohmann::json::parse(ran.out)["correct"], true) << args;
  }
}

TEST_F(Cli, PlanTreeJsonForBinomialBcast) {
  const Result r = run("plan bcast -p 8 --count 10 --algorithm bcast/binomial --json");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["tree"]["children"][0], nlohmann::json({4, 2, 1}));
  EXPECT_EQ(doc["tree"]["parent"][5], 4);
}

TEST_F(Cli, VerifyRejectsABrokenScheduleWithExitOne) {
  const std::string dump = (dir_ / "ring.txt").string();
  ASSERT_EQ(run("plan allgather -p 4 --count 3 --algorithm allgather/ring --dump " + dump).status,
            0);
  std::string text = slurp(dump);
  // Shift one receive: block 0 of rank 1 lands one element too far.
  const auto pos = text.find("recv 0 seq 0 out[0:+3]");
  ASSERT_NE(pos, std::string::npos) << text;
  text.replace(pos, 22, "recv 0 seq 0 out[1:+3]");
  const Result r = run("verify --schedule " + file("bad.txt", text) + " --json");
  EXPECT_EQ(r.status, 1) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["ok"], false);
  EXPECT_FALSE(doc["diagnostics"].empty());
}

TEST_F(Cli, RunOnThreadsIsCorrect) {
  for (const std::string args :
       {"run allreduce -p 5 --count 1000 --json --iterations 2",
        "run gatherv -p 7 --dist skewed --block-size 10 --root 6 --json --iterations 2",
        "run reduce -p 6 --count 33 --op matmul2 --dtype int64 --root 4 --json --iterations 2",
        "run alltoallv -p 4 --dist random --block-size 5 --dtype int32 --json --iterations 2",
        "run barrier -p 9 --json --iterations 3"}) {
    const Result r = run(args);
    ASSERT_EQ(r.status, 0) << args << "\n" << r.err;
    const auto doc = nlohmann::json::parse(r.out);
    EXPECT_EQ(doc["correct"], true) << args;
    EXPECT_GE(doc["seconds"].get<double>(), 0.0);
    EXPECT_TRUE(doc.contains("iterations"));
  }
}

TEST_F(Cli, SimulateWritesTraceAndSvg) {
  const std::string trace = (dir_ / "t.json").string();
  const std::string svg = (dir_ / "t.svg").string();
  const Result r = run("simulate allreduce -p 4 --count 100 --algorithm ring --trace " + trace +
                       " --svg " + svg);
  ASSERT_EQ(r.status, 0) << r.err;
  const auto doc = nlohmann::json::parse(slurp(trace));
  EXPECT_TRUE(doc.contains("traceEvents"));
  EXPECT_EQ(slurp(svg).rfind("<svg", 0), 0u);
}

// Without a model, a run on the thread backend plans with that backend's default model (the
// model a ThreadWorld's Communicator uses: thread_node_model with this process's
// processors), and plan, which runs nothing, with the reference cluster.
TEST_F(Cli, RunOnThreadsDefaultsToTheThreadModel) {
  cpu_set_t allowed;
  ASSERT_EQ(sched_getaffinity(0, sizeof(allowed), &allowed), 0);
  const std::string threads_model = (dir_ / "threads.json").string();
  {
    std::ofstream(threads_model) << "{\"base\": \"threads\", \"cores\": " << CPU_COUNT(&allowed)
                                 << "}";
  }
  for (const char* call :
       {"reduce -p 2 --count 262144", "allreduce -p 4 --count 1000", "bcast -p 3 --count 65536"}) {
    const Result ran = run(std::string("run ") + call + " --json --iterations 2 --rounds 1");
    ASSERT_EQ(ran.status, 0) << ran.err;
    const auto doc = nlohmann::json::parse(ran.out);
    EXPECT_NE(doc["model"].get<std::string>().find("the thread backend's default model"),
              std::string::npos)
        << doc["model"];
    const Result planned = run(std::string("plan ") + call + " --json --model " + threads_model);
    ASSERT_EQ(planned.status, 0) << planned.err;
    EXPECT_EQ(doc["algorithm"], nlohmann::json::parse(planned.out)["algorithm"]) << call;
  }
  const Result planned = run("plan reduce -p 2 --count 262144 --json");
  ASSERT_EQ(planned.status, 0) << planned.err;
  EXPECT_NE(nlohmann::json::parse(planned.out)["model"].get<std::string>().find(
                "the reference cluster model"),
            std::string::npos);
}

// The chart names the model it used; a timeline too large to draw op by op is aggregated,
// and the CLI says so on stderr (the library only reports it).
TEST_F(Cli, SimulateSvgAggregatesLargeTimelines) {
  const std::string small = (dir_ / "small.svg").string();
  Result r = run("simulate bcast -p 8 --count 100 --algorithm binomial --svg " + small);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err.find("warning"), std::string::npos) << r.err;
  EXPECT_NE(slurp(small).find("model: the reference cluster model"), std::string::npos);
  const std::string large = (dir_ / "large.svg").string();
  r = run("simulate bcast -p 512 --count 100 --algorithm linear --svg " + large);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("optcoll: warning: " + large + ": 1022 ops on 512 ranks are too many"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("rows of 4 ranks"), std::string::npos) << r.err;
  EXPECT_LT(slurp(large).size(), 5'000'000u);
}

// Every kind of bad input, each its own test: a clear message on stderr and exit status 2.
struct BadInput {
  const char* name;
  std::string (*args)(Cli& fixture);  // may write input files through the fixture
  const char* fragment;
};

class CliBadInput : public Cli, public ::testing::WithParamInterface<BadInput> {};

const BadInput kBadInputs[] = {
    {"unknown_collective", [](Cli&) { return std::string("plan allgatherw -p 4 --count 1"); },
     "unknown collective 'allgatherw'"},
    {"unknown_algorithm",
     [](Cli&) { return std::string("plan bcast -p 4 --count 1 --algorithm bcast/smoke_signals"); },
     "unknown algorithm 'bcast/smoke_signals' for bcast"},
    {"inapplicable_algorithm",
     [](Cli&) {
       return std::string("plan allreduce -p 4 --count 8 --noncommutative --algorithm ring");
     },
     "needs a commutative operator"},
    {"zero_ranks", [](Cli&) { return std::string("plan bcast -p 0 --count 1"); },
     "nranks must be at least 1, got 0"},
    {"topology_unknown_kind",
     [](Cli&) { return std::string("plan allreduce -p 8 --count 8 --topology ring:8"); },
     "bad topology \"ring:8\": unknown kind \"ring\""},
    {"topology_bad_dimension",
     [](Cli&) { return std::string("plan allreduce -p 8 --count 8 --topology torus:2x0x4"); },
     "dimension 0 is less than 1"},
    {"topology_not_a_number",
     [](Cli&) { return std::string("plan allreduce -p 8 --count 8 --topology mesh:2xbx2"); },
     "dimension \"b\" is not a number"},
    {"topology_unknown_option",
     [](Cli&) { return std::string("plan allreduce -p 8 --count 8 --topology torus:8:full"); },
     "unknown or repeated option \"full\""},
    {"topology_wrong_size",
     [](Cli&) {
       return std::string(
           "plan allreduce -p 8 --count 8 --topology torus:4x4 -a multicolor_bucket");
     },
     "has 16 nodes"},
    {"negative_ranks", [](Cli&) { return std::string("plan bcast -p -3 --count 1"); },
     "nranks must be at least 1, got -3"},
    {"root_out_of_range", [](Cli&) { return std::string("plan gather -p 4 --count 1 --root 4"); },
     "root 4 out of range for nranks 4"},
    {"counts_wrong_length", [](Cli&) { return std::string("plan gatherv -p 4 --counts 1,2,3"); },
     "gatherv needs 4 counts (one per rank), got 3"},
    {"negative_count_entry", [](Cli&) { return std::string("plan gatherv -p 3 --counts 1,-2,3"); },
     "counts[1] is negative (-2)"},
    {"counts_sum_overflows",
     [](Cli&) { return std::string("plan gatherv -p 2 --counts 200000000000000,200000000000000"); },
     "exceeds the limit"},
    {"negative_count", [](Cli&) { return std::string("plan bcast -p 4 --count -1"); },
     "count must be non-negative, got -1"},
    {"count_not_a_number", [](Cli&) { return std::string("plan gatherv -p 4 --counts 1,2,x,4"); },
     "'x' is not an integer"},
    {"unknown_distribution", [](Cli&) { return std::string("plan gatherv -p 4 --dist gaussian"); },
     "unknown distribution 'gaussian'"},
    {"nan_alpha", [](Cli&) { return std::string("plan bcast -p 4 --count 1 --alpha nan"); },
     "alpha is NaN"},
    {"negative_beta", [](Cli&) { return std::string("plan bcast -p 4 --count 1 --beta -2"); },
     "beta is negative"},
    {"negative_send_mode_min_bytes",
     [](Cli&) { return std::string("plan bcast -p 4 --count 1 --send-mode-min-bytes -3"); },
     "--send-mode-min-bytes: must be a byte count >= 0, got -3"},
    {"alpha_not_a_number",
     [](Cli&) { return std::string("plan bcast -p 4 --count 1 --alpha fast"); },
     "model parameter alpha must be a number, got 'fast'"},
    {"unknown_send_mode",
     [](Cli&) { return std::string("plan bcast -p 4 --count 1 --send-mode both"); },
     "model: send_mode must be one of \"port\", \"shared\", \"receiver\""},
    {"negative_send_gap",
     [](Cli&) { return std::string("plan bcast -p 4 --count 1 --send-gap -1e-7"); },
     "model parameter send_gap is negative"},
    {"nan_receive_gap",
     [](Cli&) { return std::string("plan gather -p 4 --count 1 --receive-gap nan"); },
     "model parameter receive_gap is NaN"},
    {"zero_cores", [](Cli&) { return std::string("plan bcast -p 4 --count 1 --cores 0"); },
     "model parameter cores must be in 1..1048576, got 0"},
    {"cores_with_topology",
     [](Cli&) { return std::string("plan allreduce -p 8 --count 8 --topology torus:8 --cores 2"); },
     "cores describes processors or memory that all ranks share"},
    {"zero_ports", [](Cli&) { return std::string("plan bcast -p 4 --count 1 --ports 0"); },
     "model parameter ports must be in 1..1024, got 0"},
    {"malformed_model_json",
     [](Cli& t) {
       return std::string("plan bcast -p 4 --count 1 --model " +
                          t.file("m.json", "{\"alpha\": 1,"));
     },
     "not valid JSON"},
    {"unknown_model_field",
     [](Cli& t) {
       return std::string("plan bcast -p 4 --count 1 --model " +
                          t.file("m2.json", "{\"latency\": 1}"));
     },
     "unknown field \"latency\""},
    {"missing_model_file",
     [](Cli&) { return std::string("plan bcast -p 4 --count 1 --model /nonexistent/model.json"); },
     "cannot read file"},
    {"truncated_schedule",
     [](Cli& t) {
       return std::string("verify --schedule " +
                          t.file("s.txt", "optcoll-schedule 1\nalgorithm x\n"));
     },
     "end of file"},
    {"garbage_schedule",
     [](Cli& t) { return std::string("verify --schedule " + t.file("s2.txt", "garbage\n")); },
     "expected 'optcoll-schedule 1'"},
    {"malformed_schedule_json",
     [](Cli& t) {
       return std::string("verify --schedule " +
                          t.file("s3.json", "{\"format\": \"optcoll-schedule\""));
     },
     "malformed"},
    {"verify_without_algorithm", [](Cli&) { return std::string("verify bcast -p 4 --count 1"); },
     "--algorithm NAME is required"},
    {"unknown_backend",
     [](Cli&) { return std::string("run bcast -p 4 --count 1 --backend carrier"); },
     "unknown --backend 'carrier'"},
    {"matmul2_on_floats",
     [](Cli&) { return std::string("run reduce -p 4 --count 1 --op matmul2 --dtype double"); },
     "matmul2 needs an integer type"},
    {"root_on_scan", [](Cli&) { return std::string("plan scan -p 4 --count 1 --root 2"); },
     "scan has no root (got root 2)"},
    {"root_on_rootless", [](Cli&) { return std::string("plan allreduce -p 4 --count 1 --root 2"); },
     "allreduce has no root"},
    {"no_collective", [](Cli&) { return std::string("plan"); }, "collective"},
    {"unknown_command", [](Cli&) { return std::string("frobnicate"); },
     "unknown command 'frobnicate' (known: list, plan"},
    // docs/errors.md: one row per CLI error without another test.
    {"counts_without_numbers", [](Cli&) { return std::string("plan gatherv -p 2 --counts ,"); },
     "--counts holds no numbers"},
    {"missing_ranks", [](Cli&) { return std::string("plan bcast --count 1"); },
     "-p/--nranks N is required (the number of ranks)"},
    {"schedule_is_a_directory", [](Cli& t) { return "verify --schedule " + t.dir_.string(); },
     "is a directory, not a file"},
    {"model_is_a_directory",
     [](Cli& t) { return "plan bcast -p 2 --count 1 --model " + t.dir_.string(); },
     "is a directory, not a file"},
    // Estimated before building (at once, where building took minutes and gigabytes).
    {"plan_beyond_memory",
     [](Cli&) { return std::string("plan barrier -p 16777216 -a dissemination --max-memory 8G"); },
     "barrier p=16777216 with dissemination needs about 240.6 GiB of memory: schedule 240.6 GiB "
     "(8.05e+08 ops, growing as p^1.0 log2 p); more than the limit of 8.0 GiB (--max-memory)"},
    {"simulate_beyond_memory",
     [](Cli&) {
       return std::string("simulate allreduce -p 4096 --count 4096 -a ring --max-memory 1G");
     },
     "schedule 24.2 GiB (8.66e+07 ops, growing as p^2.0); more than the limit of 1.0 GiB"},
    {"run_world_beyond_memory",
     [](Cli&) { return std::string("run bcast -p 20000 --count 4 -a binomial --max-memory 8G"); },
     "thread world 62.9 GiB (4e+08 rank pairs)"},
    {"run_schedule_beyond_memory",
     [](Cli&) { return std::string("run allreduce -p 5000 --count 5000 -a ring --max-memory 8G"); },
     "schedule 36.1 GiB (1.29e+08 ops, growing as p^2.0), thread world"},
    {"run_auto_world_beyond_memory",
     [](Cli&) { return std::string("run bcast -p 20000 --count 4 --max-memory 8G"); },
     "bcast p=20000 root=0 count=4 with auto needs about 62.9 GiB of memory: thread world"},
    {"counts_file_missing",
     [](Cli&) { return std::string("plan gatherv -p 2 --counts @/nonexistent/counts.txt"); },
     "cannot read file '/nonexistent/counts.txt'"},
    {"dump_unwritable",
     [](Cli&) { return std::string("plan bcast -p 4 --count 1 --dump /nonexistent/dir/s.txt"); },
     "cannot write file '/nonexistent/dir/s.txt'"},
    {"dump_device_full",
     [](Cli&) { return std::string("plan bcast -p 4 --count 1 --dump /dev/full"); },
     "writing file '/dev/full' failed"},
    {"root_not_an_integer",
     [](Cli&) { return std::string("plan bcast -p 4 --count 1 --root 1e3"); },
     "--root: '1e3' is not an integer"},
    {"root_beyond_int",
     [](Cli&) { return std::string("plan bcast -p 4 --count 1 --root 99999999999"); },
     "--root 99999999999 out of range"},
    {"best_root_on_rootless",
     [](Cli&) { return std::string("plan allreduce -p 4 --count 1 --root best"); },
     "allreduce has no root; --root best does not apply"},
    {"two_count_sources",
     [](Cli&) { return std::string("plan gatherv -p 2 --count 1 --counts 1,2"); },
     "give only one of --count, --counts and --dist"},
    {"barrier_with_count", [](Cli&) { return std::string("plan barrier -p 2 --count 1"); },
     "barrier carries no data: drop --count/--counts/--dist"},
    {"negative_uniform_v_count", [](Cli&) { return std::string("plan gatherv -p 2 --count -4"); },
     "--count must be non-negative, got -4"},
    {"v_variant_without_counts", [](Cli&) { return std::string("plan gatherv -p 2"); },
     "gatherv needs --counts, --dist or --count"},
    {"counts_on_uniform", [](Cli&) { return std::string("plan bcast -p 2 --counts 1,2"); },
     "bcast takes a uniform --count; --counts and --dist are for the v-variants"},
    {"uniform_without_count", [](Cli&) { return std::string("plan bcast -p 2"); },
     "bcast needs --count"},
    {"unknown_dtype", [](Cli&) { return std::string("plan bcast -p 2 --count 1 --dtype int8"); },
     "unknown --dtype 'int8' (known: int32, int64, float, double)"},
    {"unknown_op", [](Cli&) { return std::string("plan reduce -p 2 --count 1 --op xor"); },
     "unknown --op 'xor' (known: sum, prod, min, max, matmul2)"},
    {"unknown_duplex",
     [](Cli&) { return std::string("plan bcast -p 2 --count 1 --duplex simplex"); },
     "model: duplex must be one of \"half\", \"full\""},
    {"schedule_and_problem",
     [](Cli& t) {
       return std::string("verify bcast -p 2 --count 1 --schedule " + t.file("s4.txt", "x\n"));
     },
     "give either --schedule FILE or a collective with --algorithm, not both"},
    {"verify_nothing", [](Cli&) { return std::string("verify"); },
     "give a collective and --algorithm, or --schedule FILE"},
    {"verify_best_root",
     [](Cli&) {
       return std::string("verify bcast -p 4 --count 1 --root best --algorithm binomial");
     },
     "--root best needs a cost model: use 'optcoll plan'"},
    {"demo_one_rank", [](Cli&) { return std::string("demo -p 1"); },
     "--nranks must be in 2..256, got 1"},
    {"demo_zero_count", [](Cli&) { return std::string("demo -p 4 --count 0"); },
     "--count must be positive, got 0"},
    {"experiment_without_name", [](Cli&) { return std::string("experiment"); },
     "give an experiment name (listed above) or 'all'"},
    {"experiment_all_json", [](Cli&) { return std::string("experiment all --quick --json"); },
     "--json prints one experiment's document: name the experiment"},
    {"experiment_out_is_a_file",
     [](Cli& t) {
       return std::string("experiment registry-costs --quick --out " + t.file("f", "x") + "/sub");
     },
     "cannot create output directory"},
    {"zero_timeout", [](Cli&) { return std::string("run bcast -p 4 --count 1 --timeout 0"); },
     "--timeout must be at least 1 ms, got 0"},
    {"zero_iterations", [](Cli&) { return std::string("run bcast -p 4 --count 1 --iterations 0"); },
     "iterations must be at least 1, got 0"},
    {"list_unknown_collective", [](Cli&) { return std::string("list --collective allgatherw"); },
     "unknown collective 'allgatherw'"},
    {"unknown_param",
     [](Cli&) {
       return std::string("plan bcast -p 4 --count 1 --algorithm binomial --param radix=4");
     },
     "has no parameter 'radix'"},
    {"param_without_value",
     [](Cli&) {
       return std::string("plan bcast -p 4 --count 1 --algorithm binomial --param radix");
     },
     "algorithm parameter 'radix' must look like name=value"},
    {"params_with_auto", [](Cli&) { return std::string("plan bcast -p 4 --count 1 --param k=2"); },
     "need an explicit algorithm, not auto"},
    {"plan_rank_out_of_range",
     [](Cli&) { return std::string("plan bcast -p 4 --count 1 --rank 4"); },
     "a plan for rank 4 of a 4-rank call: ranks are 0 to 3"},
    {"planning_workers_zero",
     [](Cli&) { return std::string("plan bcast -p 4 --count 1 --planning-workers 0"); },
     "--planning-workers must be at least 1, got 0"},
    {"reproducible_bcast",
     [](Cli&) { return std::string("plan bcast -p 4 --count 8 --reproducible"); },
     "bcast combines nothing: 'reproducible' applies to reductions only"},
    {"reproducible_ring",
     [](Cli&) {
       return std::string("plan allreduce -p 4 --count 8 --reproducible --algorithm ring");
     },
     "not the fixed left fold that 'reproducible' requires"},
    {"bad_topology",
     [](Cli&) { return std::string("plan allreduce -p 16 --count 16 --topology ring:16"); },
     "bad topology \"ring:16\": unknown kind \"ring\""},
    {"placement_size_mismatch",
     [](Cli&) { return std::string("plan allreduce -p 8 --count 16 --placement 4x4"); },
     "placement 4x4 has 16 ranks but the collective has 8"},
    {"placement_not_a_number",
     [](Cli&) { return std::string("plan allreduce -p 4 --count 16 --placement 0,1,y,1"); },
     "placement: entry 2 (rank 2) \"y\" is not a whole number"},
    {"placement_file_missing",
     [](Cli&) {
       return std::string("plan allreduce -p 4 --count 16 --placement @/nonexistent/n.txt");
     },
     "placement file /nonexistent/n.txt: cannot read file '/nonexistent/n.txt'"},
    {"placement_file_empty_node",
     [](Cli& cli) {
       return "plan allreduce -p 4 --count 16 --placement @" + cli.file("nodes.txt", "0 0 2 2\n");
     },
     "node 1 holds no rank"},
    {"inter_beta_without_placement",
     [](Cli&) { return std::string("plan allreduce -p 4 --count 16 --inter-beta 1e-9"); },
     "inter_beta prices messages between nodes, but the model has no placement"},
    {"topology_size_mismatch",
     [](Cli&) { return std::string("plan allreduce -p 8 --count 16 --topology torus:4x4"); },
     "has 16 nodes but the collective has 8 ranks"},
    {"torus_directions",
     [](Cli&) {
       return std::string(
           "plan allreduce -p 16 --count 16 --topology torus:4x4 -a multicolor_bucket "
           "--param directions=3");
     },
     "parameter directions must be 1, 2 or auto, got 3"},
    {"torus_pieces",
     [](Cli&) {
       return std::string(
           "plan allgather -p 16 --count 16 --topology torus:4x4 -a multicolor_bucket "
           "--param pieces=0");
     },
     "parameter pieces must be in 1..1024, got 0"},
    {"torus_sync",
     [](Cli&) {
       return std::string(
           "plan reduce_scatter_block -p 16 --count 16 --topology torus:4x4 -a "
           "multicolor_bucket --param sync=2");
     },
     "parameter sync must be 0 or 1, got 2"},
    {"export_missing", [](Cli&) { return std::string("export --format ompi-rules -p 4"); },
     "export needs --format, -p and --out (or --list)"},
    {"export_format",
     [](Cli&) { return std::string("export --format slurm -p 4 --out /dev/null"); },
     "--format 'slurm': expected ompi-rules or mpich-json"},
    {"export_p_one",
     [](Cli&) { return std::string("export --format ompi-rules -p 1 --out /dev/null"); },
     "-p '1': expected rank counts of at least 2"},
    {"export_p_range",
     [](Cli&) { return std::string("export --format ompi-rules -p 8-4 --out /dev/null"); },
     "-p '8-4': the range is empty"},
    {"export_collective",
     [](Cli&) {
       return std::string(
           "export --format ompi-rules -p 4 --collectives allgatherw --out /dev/null");
     },
     "--collectives: 'allgatherw' is not a collective"},
    {"export_no_rules",
     [](Cli&) {
       return std::string("export --format ompi-rules -p 4 --collectives gatherv --out /dev/null");
     },
     "export: Open MPI 4.1 has no selection rules for gatherv"},
    {"export_sizes",
     [](Cli&) {
       return std::string(
           "export --format mpich-json -p 4 --min-bytes 1M --max-bytes 1K --out /dev/null");
     },
     "export: sizes from 1048576 to 1024 bytes: need 1 <= min <= max"},
    {"export_factor",
     [](Cli&) { return std::string("export --format mpich-json -p 4 --factor 1 --out /dev/null"); },
     "export: size factor 1: must be at least 2"},
    {"export_tuning_and_model",
     [](Cli&) {
       return std::string(
           "export --format ompi-rules -p 4 --tuning t.json --alpha 1e-6 --out /dev/null");
     },
     "--tuning, --library-timings and model options: give one"},
    {"export_margin_without_timings",
     [](Cli&) {
       return std::string("export --format ompi-rules -p 4 --default-margin 0.2 --out /dev/null");
     },
     "--default-margin is for --library-timings"},
    {"export_timings_and_tuning",
     [](Cli&) {
       return std::string(
           "export --format ompi-rules -p 4 --tuning t.json --library-timings l.json --out "
           "/dev/null");
     },
     "--tuning, --library-timings and model options: give one"},
};

TEST_P(CliBadInput, IsAClearErrorWithExitTwo) {
  const BadInput& bad = GetParam();
  expect_usage_error(bad.args(*this), bad.fragment);
}

INSTANTIATE_TEST_SUITE_P(Cli, CliBadInput, ::testing::ValuesIn(kBadInputs),
                         [](const auto& param_info) { return std::string(param_info.param.name); });

TEST_F(Cli, ReproducibleAutoPicksAFixedOrderAlgorithmAndSaysWhyNotTheOthers) {
  const Result r = run("plan allreduce -p 8 --count 800 --reproducible --explain");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("allreduce p=8 count=800 reproducible"), std::string::npos) << r.out;
  const bool fixed = r.out.find("algorithm       allreduce/reproducible") != std::string::npos ||
                     r.out.find("algorithm       allreduce/linear") != std::string::npos ||
                     r.out.find("algorithm       compose(reduce/reproducible") != std::string::npos;
  EXPECT_TRUE(fixed) << r.out;
  EXPECT_NE(r.out.find("allreduce/ring "), std::string::npos);
  EXPECT_NE(r.out.find("not the fixed left fold"), std::string::npos) << r.out;
  // The chosen schedule runs and its result checks out.
  const Result run_result = run("run allreduce -p 8 --count 800 --reproducible");
  EXPECT_EQ(run_result.status, 0) << run_result.err << run_result.out;
}

// At many ranks and few elements the rings cannot win. By default auto prices them by their
// cost formulas and does not build them; --exhaustive lists them with their lower bound and
// does not build them either; --all-candidates simulates them. The choice is the same.
TEST_F(Cli, PlanSaysHowItPricedEveryCandidate) {
  const auto ring_line = [](const std::string& out) {
    const auto at = out.find("allreduce/ring ");
    return at == std::string::npos ? std::string() : out.substr(at, out.find('\n', at) - at);
  };
  const std::string call = "plan allreduce -p 64 --count 64 --explain";
  const Result fast = run(call);
  ASSERT_EQ(fast.status, 0) << fast.err;
  EXPECT_NE(ring_line(fast.out).find("(formula"), std::string::npos) << fast.out;
  const Result pruned = run(call + " --exhaustive");
  ASSERT_EQ(pruned.status, 0) << pruned.err;
  EXPECT_NE(ring_line(pruned.out).find(">= "), std::string::npos) << pruned.out;
  EXPECT_NE(ring_line(pruned.out).find("not built"), std::string::npos) << pruned.out;
  const Result full = run(call + " --all-candidates");
  ASSERT_EQ(full.status, 0) << full.err;
  EXPECT_EQ(ring_line(full.out).find("not built"), std::string::npos) << full.out;
  EXPECT_EQ(ring_line(full.out).find("formula"), std::string::npos) << full.out;
  EXPECT_NE(ring_line(full.out).find("moves"), std::string::npos) << full.out;
  const auto first_line = [](const std::string& out) { return out.substr(0, out.find("ops")); };
  EXPECT_EQ(first_line(fast.out), first_line(full.out));  // the same choice and prediction
  EXPECT_EQ(first_line(pruned.out), first_line(full.out));
  for (const auto& [flags, evaluation] : {std::pair<std::string, std::string>{"", "formula, exact"},
                                          {" --exhaustive", "pruned by its bound"},
                                          {" --all-candidates", "simulated"}}) {
    const Result json = run("plan allreduce -p 64 --count 64 --json" + flags);
    ASSERT_EQ(json.status, 0) << json.err;
    std::string ring_evaluation;
    const auto parsed = nlohmann::json::parse(json.out);
    for (const auto& c : parsed["candidates"]) {
      if (c["algorithm"] == "allreduce/ring") ring_evaluation = c["evaluation"];
    }
    EXPECT_EQ(ring_evaluation, evaluation) << flags << "\n" << json.out;
  }
}

TEST_F(Cli, TopologyGivesTheLinkBoundAndTheMulticolorAlgorithm) {
  // 4x4x4 bidirectional, alpha = 0, n = 384: the link bound 2(p-1)/p·n/(2N) = 2·63/64·64 =
  // 126, which the multicolor allreduce reaches. (With alpha = 0 the pipelined candidates
  // take one-element segments: at n = 3072 their schedules made this plan take 6 s.)
  const Result r =
      run("plan allreduce -p 64 --count 384 --topology torus:4x4x4:bi --abstract --alpha 0");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("algorithm       allreduce/multicolor_bucket"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("predicted time  126\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("lower bound     126 "), std::string::npos) << r.out;
}

TEST_F(Cli, SharedSendsLetTheRootReachEveryRankInOneTransfer) {
  // p = 8, 1000 doubles (8000 B), alpha = 100, beta = 1 per element: with shared sends from
  // 0 B the root's seven sends of its buffer share its port, so linear takes one transfer
  // (1100) against a lower bound of one transfer's bandwidth (1000); with the threshold
  // above 8000 B the root pays seven transfers for linear and a tree wins.
  const std::string base = "plan bcast -p 8 --count 1000 --abstract --alpha 100";
  const Result shared = run(base + " --send-mode shared --send-mode-min-bytes 0");
  ASSERT_EQ(shared.status, 0) << shared.err;
  EXPECT_NE(shared.out.find("algorithm       bcast/linear"), std::string::npos) << shared.out;
  EXPECT_NE(shared.out.find("predicted time  1100"), std::string::npos) << shared.out;
  const Result above = run(base + " --send-mode shared --send-mode-min-bytes 8001 -a linear");
  ASSERT_EQ(above.status, 0) << above.err;
  EXPECT_NE(above.out.find("predicted time  7700"), std::string::npos) << above.out;
  const Result at = run(base + " --send-mode shared --send-mode-min-bytes 8000 -a linear");
  ASSERT_EQ(at.status, 0) << at.err;
  EXPECT_NE(at.out.find("predicted time  1100"), std::string::npos) << at.out;
}

TEST_F(Cli, OneModelRuleForFilesAndOptionsAndEveryOutputSaysWhichModel) {
  // A file sets the fields it has over the reference cluster (per byte); options override
  // the file; --abstract (or the file's "base") starts from the unit model instead.
  // binomial bcast of 1 element at p = 2: one transfer, alpha + beta * bytes.
  const std::string partial = file("partial.json", "{\"alpha\": 1e-3}");
  const Result over_reference = run("plan bcast -p 2 --count 1 -a binomial --model " + partial);
  ASSERT_EQ(over_reference.status, 0) << over_reference.err;
  EXPECT_NE(over_reference.out.find("model           " + partial + "; per byte"), std::string::npos)
      << over_reference.out;
  const Result reference_json =
      run("plan bcast -p 2 --count 1 -a binomial --json --model " + partial);
  ASSERT_EQ(reference_json.status, 0) << reference_json.err;
  // 1 ms + 8 B * 0.1 ns/B: the reference's beta shows through.
  EXPECT_DOUBLE_EQ(nlohmann::json::parse(reference_json.out)["predicted_time"].get<double>(),
                   1e-3 + 8 * 1e-10);
  const Result abstract =
      run("plan bcast -p 2 --count 1 -a binomial --abstract --model " + partial + " --beta 5");
  ASSERT_EQ(abstract.status, 0) << abstract.err;
  // Unit model (per element) with alpha = 1e-3 from the file and beta = 5 from the option.
  EXPECT_NE(abstract.out.find("predicted time  5.001"), std::string::npos) << abstract.out;
  EXPECT_NE(abstract.out.find(partial + " with --beta 5; per element"), std::string::npos)
      << abstract.out;
  const std::string unit = file("unit.json", "{\"base\": \"unit\", \"alpha\": 3}");
  const Result file_base = run("plan bcast -p 2 --count 1 -a binomial --json --model " + unit);
  ASSERT_EQ(file_base.status, 0) << file_base.err;
  const auto json = nlohmann::json::parse(file_base.out);
  EXPECT_DOUBLE_EQ(json["predicted_time"].get<double>(), 4.0);
  EXPECT_NE(json["model"].get<std::string>().find("per element"), std::string::npos);
  // Cores fewer than ranks: plan says what that costs.
  const Result shared = run("plan bcast -p 8 --count 1 --cores 2");
  ASSERT_EQ(shared.status, 0) << shared.err;
  EXPECT_NE(shared.out.find("the model's 2 cores are shared by 8 ranks"), std::string::npos)
      << shared.out;
}

TEST_F(Cli, ExperimentWritesItsFiles) {
  const Result r = run("experiment registry-costs --quick --out " + (dir_ / "exp").string());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("| allreduce |"), std::string::npos) << r.out;
  EXPECT_EQ(slurp(dir_ / "exp" / "registry-costs-allreduce.svg").rfind("<svg", 0), 0u);
  EXPECT_NE(slurp(dir_ / "exp" / "registry-costs.csv").find("allreduce,allreduce/ring,8,"),
            std::string::npos);
  const Result list = run("experiment --list");
  EXPECT_EQ(list.status, 0);
  EXPECT_NE(list.out.find("registry-costs"), std::string::npos);
  const Result bad = run("experiment no-such-thing");
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("unknown experiment 'no-such-thing'"), std::string::npos) << bad.err;
}

// A long experiment says how far it is on stderr, one line per row of its tables (66), and
// keeps stdout for its result.
TEST_F(Cli, TraffTablesPrintsProgress) {
  const Result r = run("experiment traff-tables --quick --json --out " + (dir_ / "exp").string());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(nlohmann::json::accept(r.out)) << r.out.substr(0, 200);
  EXPECT_EQ(r.err.find("traff-tables: 1/66 rows (alpha=100, copy=beta, "), 0u) << r.err;
  EXPECT_NE(r.err.find("traff-tables: 66/66 rows (alpha=1000, copy=0, "), std::string::npos)
      << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 66) << r.err;
}

TEST_F(Cli, DemoRunsAndConfirmsResults) {
  const Result r = run("demo -p 4 --count 4096");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("demo: all results correct"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("gatherv/"), std::string::npos);
}

}  // namespace
