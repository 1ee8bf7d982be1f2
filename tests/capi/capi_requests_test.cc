// SPDX-License-Identifier: Apache-2.0
// File: the C API's nonblocking (OPTCOLL_I*) and persistent (OPTCOLL_*_init) collectives under
// mpirun, against the MPI library's blocking collectives on the same data, compared bit for
// bit over whole receive buffers: every collective of the table with irregular counts,
// displacements out of rank order (the staging and unpacking paths), MPI_IN_PLACE, all in
// flight at once and completed by one OPTCOLL_Waitall; persistent requests started three
// times with new data (in-place data included); then the misuse errors. Exit 0 when every
// rank saw what it should.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "optcoll.h"

namespace {

int g_rank = 0;
int g_size = 0;
int g_failures = 0;
int g_checks = 0;

void expect(bool ok, const std::string& what) {
  ++g_checks;
  if (!ok) {
    ++g_failures;
    std::fprintf(stderr, "rank %d: FAILED %s (%s)\n", g_rank, what.c_str(), OPTCOLL_Last_error());
  }
}

using Ints = std::vector<std::int32_t>;

Ints data(std::size_t n, int round, int salt) {
  Ints v(n);
  for (std::size_t i = 0; i < n; ++i)
    v[i] = (g_rank + 1) * 100003 + static_cast<int>(i) * 7919 + round * 31 + salt;
  return v;
}

// Irregular counts with zeros; displacements in reverse rank order with gaps (not packed).
std::vector<int> counts_of(int salt) {
  std::vector<int> c(static_cast<std::size_t>(g_size));
  for (int r = 0; r < g_size; ++r)
    c[static_cast<std::size_t>(r)] = (r + salt) % 3 == 0 ? 0 : 5 * r + salt % 7 + 1;
  return c;
}
std::vector<int> reversed_displs(const std::vector<int>& counts, int* total) {
  std::vector<int> d(counts.size());
  int at = 2;
  for (std::size_t i = counts.size(); i-- > 0;) {
    d[i] = at;
    at += counts[i] + 3;
  }
  *total = at;
  return d;
}

enum class Mode { kNonblocking, kPersistent };

// One collective: its buffers (ours and MPI's, filled alike), MPI's blocking call, our
// nonblocking or persistent one, and the comparison.
struct Case {
  std::string name;
  std::function<void(int round)> fill;
  std::function<void()> mpi;
  std::function<int(Mode, OPTCOLL_Request*)> ours;
  std::function<bool()> same;
};

// Buffers of a case: in/out for us (a, b) and for MPI (c, d).
struct Buffers {
  Ints a, b, c, d;
  bool same() const { return b == d && a == c; }
};

std::vector<Case> make_cases() {
  std::vector<Case> cases;
  const MPI_Comm w = MPI_COMM_WORLD;
  const int p = g_size;
  const int root = p / 2;
  const std::size_t n = 37;
  auto add = [&](const std::string& name, std::function<void(Buffers&, int)> fill,
                 std::function<void(Buffers&)> mpi,
                 std::function<int(Buffers&, Mode, OPTCOLL_Request*)> ours) {
    auto b = std::make_shared<Buffers>();
    cases.push_back({name, [b, fill](int round) { fill(*b, round); }, [b, mpi] { mpi(*b); },
                     [b, ours](Mode m, OPTCOLL_Request* r) { return ours(*b, m, r); },
                     [b] { return b->same(); }});
  };
  auto plain = [n](std::size_t in, std::size_t out, int salt) {
    return [=](Buffers& b, int round) {
      b.a = b.c = data(in, round, salt);
      b.b = b.d = Ints(out, -1);
      (void)n;
    };
  };
#define FORM(mode, request, nonblocking_call, init_call) \
  ((mode) == Mode::kNonblocking ? (nonblocking_call) : (init_call))
  add(
      "bcast", [](Buffers& b, int round) { b.b = b.d = data(n, round, 1); },
      [=](Buffers& b) { MPI_Bcast(b.d.data(), n, MPI_INT, root, w); },
      [=](Buffers& b, Mode m, OPTCOLL_Request* r) {
        return FORM(m, r, OPTCOLL_Ibcast(b.b.data(), n, MPI_INT, root, w, r),
                    OPTCOLL_Bcast_init(b.b.data(), n, MPI_INT, root, w, r));
      });
  add(
      "allreduce", plain(n, n, 2),
      [=](Buffers& b) { MPI_Allreduce(b.c.data(), b.d.data(), n, MPI_INT, MPI_SUM, w); },
      [=](Buffers& b, Mode m, OPTCOLL_Request* r) {
        return FORM(m, r, OPTCOLL_Iallreduce(b.a.data(), b.b.data(), n, MPI_INT, MPI_SUM, w, r),
                    OPTCOLL_Allreduce_init(b.a.data(), b.b.data(), n, MPI_INT, MPI_SUM, w, r));
      });
  add(
      "allreduce in place", [](Buffers& b, int round) { b.b = b.d = data(n, round, 3); },
      [=](Buffers& b) { MPI_Allreduce(MPI_IN_PLACE, b.d.data(), n, MPI_INT, MPI_MAX, w); },
      [=](Buffers& b, Mode m, OPTCOLL_Request* r) {
        return FORM(m, r, OPTCOLL_Iallreduce(MPI_IN_PLACE, b.b.data(), n, MPI_INT, MPI_MAX, w, r),
                    OPTCOLL_Allreduce_init(MPI_IN_PLACE, b.b.data(), n, MPI_INT, MPI_MAX, w, r));
      });
  add(
      "reduce", plain(n, n, 4),
      [=](Buffers& b) { MPI_Reduce(b.c.data(), b.d.data(), n, MPI_INT, MPI_SUM, root, w); },
      [=](Buffers& b, Mode m, OPTCOLL_Request* r) {
        return FORM(m, r, OPTCOLL_Ireduce(b.a.data(), b.b.data(), n, MPI_INT, MPI_SUM, root, w, r),
                    OPTCOLL_Reduce_init(b.a.data(), b.b.data(), n, MPI_INT, MPI_SUM, root, w, r));
      });
  add(
      "scan", plain(n, n, 5),
      [=](Buffers& b) { MPI_Scan(b.c.data(), b.d.data(), n, MPI_INT, MPI_SUM, w); },
      [=](Buffers& b, Mode m, OPTCOLL_Request* r) {
        return FORM(m, r, OPTCOLL_Iscan(b.a.data(), b.b.data(), n, MPI_INT, MPI_SUM, w, r),
                    OPTCOLL_Scan_init(b.a.data(), b.b.data(), n, MPI_INT, MPI_SUM, w, r));
      });
  add(
      "exscan", plain(n, n, 6),
      [=](Buffers& b) {
        MPI_Exscan(b.c.data(), b.d.data(), n, MPI_INT, MPI_SUM, w);
        if (g_rank == 0) b.d = b.b;  // undefined on rank 0
      },
      [=](Buffers& b, Mode m, OPTCOLL_Request* r) {
        return FORM(m, r, OPTCOLL_Iexscan(b.a.data(), b.b.data(), n, MPI_INT, MPI_SUM, w, r),
                    OPTCOLL_Exscan_init(b.a.data(), b.b.data(), n, MPI_INT, MPI_SUM, w, r));
      });
  add(
      "gather", plain(n, n * static_cast<std::size_t>(p), 7),
      [=](Buffers& b) { MPI_Gather(b.c.data(), n, MPI_INT, b.d.data(), n, MPI_INT, root, w); },
      [=](Buffers& b, Mode m, OPTCOLL_Request* r) {
        return FORM(
            m, r, OPTCOLL_Igather(b.a.data(), n, MPI_INT, b.b.data(), n, MPI_INT, root, w, r),
            OPTCOLL_Gather_init(b.a.data(), n, MPI_INT, b.b.data(), n, MPI_INT, root, w, r));
      });
  add(
      "scatter", plain(n * static_cast<std::size_t>(p), n, 8),
      [=](Buffers& b) { MPI_Scatter(b.c.data(), n, MPI_INT, b.d.data(), n, MPI_INT, root, w); },
      [=](Buffers& b, Mode m, OPTCOLL_Request* r) {
        return FORM(
            m, r, OPTCOLL_Iscatter(b.a.data(), n, MPI_INT, b.b.data(), n, MPI_INT, root, w, r),
            OPTCOLL_Scatter_init(b.a.data(), n, MPI_INT, b.b.data(), n, MPI_INT, root, w, r));
      });
  add(
      "allgather in place",
      [=](Buffers& b, int round) { b.b = b.d = data(n * static_cast<std::size_t>(p), round, 9); },
      [=](Buffers& b) { MPI_Allgather(MPI_IN_PLACE, 0, MPI_INT, b.d.data(), n, MPI_INT, w); },
      [=](Buffers& b, Mode m, OPTCOLL_Request* r) {
        return FORM(m, r,
                    OPTCOLL_Iallgather(MPI_IN_PLACE, 0, MPI_INT, b.b.data(), n, MPI_INT, w, r),
                    OPTCOLL_Allgather_init(MPI_IN_PLACE, 0, MPI_INT, b.b.data(), n, MPI_INT, w, r));
      });
  add(
      "alltoall", plain(n * static_cast<std::size_t>(p), n * static_cast<std::size_t>(p), 10),
      [=](Buffers& b) { MPI_Alltoall(b.c.data(), n, MPI_INT, b.d.data(), n, MPI_INT, w); },
      [=](Buffers& b, Mode m, OPTCOLL_Request* r) {
        return FORM(m, r, OPTCOLL_Ialltoall(b.a.data(), n, MPI_INT, b.b.data(), n, MPI_INT, w, r),
                    OPTCOLL_Alltoall_init(b.a.data(), n, MPI_INT, b.b.data(), n, MPI_INT, w, r));
      });
  add(
      "reduce_scatter_block", plain(n * static_cast<std::size_t>(p), n, 11),
      [=](Buffers& b) { MPI_Reduce_scatter_block(b.c.data(), b.d.data(), n, MPI_INT, MPI_SUM, w); },
      [=](Buffers& b, Mode m, OPTCOLL_Request* r) {
        return FORM(
            m, r, OPTCOLL_Ireduce_scatter_block(b.a.data(), b.b.data(), n, MPI_INT, MPI_SUM, w, r),
            OPTCOLL_Reduce_scatter_block_init(b.a.data(), b.b.data(), n, MPI_INT, MPI_SUM, w, r));
      });
  // The v-collectives: irregular counts, reversed displacements.
  auto counts = std::make_shared<std::vector<int>>(counts_of(1));
  int total = 0;
  auto displs = std::make_shared<std::vector<int>>(reversed_displs(*counts, &total));
  const auto me = static_cast<std::size_t>(g_rank);
  const int mine = (*counts)[me];
  int sum = 0;
  for (const int c : *counts) sum += c;
  add(
      "reduce_scatter", plain(static_cast<std::size_t>(sum), static_cast<std::size_t>(mine), 12),
      [=](Buffers& b) {
        MPI_Reduce_scatter(b.c.data(), b.d.data(), counts->data(), MPI_INT, MPI_SUM, w);
      },
      [=](Buffers& b, Mode m, OPTCOLL_Request* r) {
        return FORM(
            m, r,
            OPTCOLL_Ireduce_scatter(b.a.data(), b.b.data(), counts->data(), MPI_INT, MPI_SUM, w, r),
            OPTCOLL_Reduce_scatter_init(b.a.data(), b.b.data(), counts->data(), MPI_INT, MPI_SUM, w,
                                        r));
      });
  for (const bool known : {false, true}) {
    const std::string suffix = known ? "_known" : "";
    add(
        "gatherv" + suffix,
        plain(static_cast<std::size_t>(mine), static_cast<std::size_t>(total), 13),
        [=](Buffers& b) {
          MPI_Gatherv(b.c.data(), mine, MPI_INT, b.d.data(), counts->data(), displs->data(),
                      MPI_INT, root, w);
          if (g_rank != root) b.d = b.b;  // recvbuf is ignored off the root
        },
        [=](Buffers& b, Mode m, OPTCOLL_Request* r) {
          if (known) {
            return FORM(
                m, r,
                OPTCOLL_Igatherv_known(b.a.data(), mine, MPI_INT, b.b.data(), counts->data(),
                                       displs->data(), MPI_INT, root, w, r),
                OPTCOLL_Gatherv_known_init(b.a.data(), mine, MPI_INT, b.b.data(), counts->data(),
                                           displs->data(), MPI_INT, root, w, r));
          }
          return FORM(m, r,
                      OPTCOLL_Igatherv(b.a.data(), mine, MPI_INT, b.b.data(), counts->data(),
                                       displs->data(), MPI_INT, root, w, r),
                      OPTCOLL_Gatherv_init(b.a.data(), mine, MPI_INT, b.b.data(), counts->data(),
                                           displs->data(), MPI_INT, root, w, r));
        });
    add(
        "scatterv" + suffix,
        plain(static_cast<std::size_t>(total), static_cast<std::size_t>(mine), 14),
        [=](Buffers& b) {
          MPI_Scatterv(b.c.data(), counts->data(), displs->data(), MPI_INT, b.d.data(), mine,
                       MPI_INT, root, w);
        },
        [=](Buffers& b, Mode m, OPTCOLL_Request* r) {
          if (known) {
            return FORM(
                m, r,
                OPTCOLL_Iscatterv_known(b.a.data(), counts->data(), displs->data(), MPI_INT,
                                        b.b.data(), mine, MPI_INT, root, w, r),
                OPTCOLL_Scatterv_known_init(b.a.data(), counts->data(), displs->data(), MPI_INT,
                                            b.b.data(), mine, MPI_INT, root, w, r));
          }
          return FORM(m, r,
                      OPTCOLL_Iscatterv(b.a.data(), counts->data(), displs->data(), MPI_INT,
                                        b.b.data(), mine, MPI_INT, root, w, r),
                      OPTCOLL_Scatterv_init(b.a.data(), counts->data(), displs->data(), MPI_INT,
                                            b.b.data(), mine, MPI_INT, root, w, r));
        });
  }
  add(
      "allgatherv", plain(static_cast<std::size_t>(mine), static_cast<std::size_t>(total), 15),
      [=](Buffers& b) {
        MPI_Allgatherv(b.c.data(), mine, MPI_INT, b.d.data(), counts->data(), displs->data(),
                       MPI_INT, w);
      },
      [=](Buffers& b, Mode m, OPTCOLL_Request* r) {
        return FORM(m, r,
                    OPTCOLL_Iallgatherv(b.a.data(), mine, MPI_INT, b.b.data(), counts->data(),
                                        displs->data(), MPI_INT, w, r),
                    OPTCOLL_Allgatherv_init(b.a.data(), mine, MPI_INT, b.b.data(), counts->data(),
                                            displs->data(), MPI_INT, w, r));
      });
  // alltoallv: rank i sends (i + j) % 3 elements to j, packed send side, reversed receive side.
  auto send_counts = std::make_shared<std::vector<int>>(static_cast<std::size_t>(p));
  auto recv_counts = std::make_shared<std::vector<int>>(static_cast<std::size_t>(p));
  for (int j = 0; j < p; ++j) {
    (*send_counts)[static_cast<std::size_t>(j)] = (g_rank + j) % 3;
    (*recv_counts)[static_cast<std::size_t>(j)] = (j + g_rank) % 3;
  }
  int send_total = 0;
  auto sdispls = std::make_shared<std::vector<int>>(reversed_displs(*send_counts, &send_total));
  int recv_total = 0;
  auto rdispls = std::make_shared<std::vector<int>>(reversed_displs(*recv_counts, &recv_total));
  add(
      "alltoallv",
      plain(static_cast<std::size_t>(send_total), static_cast<std::size_t>(recv_total), 16),
      [=](Buffers& b) {
        MPI_Alltoallv(b.c.data(), send_counts->data(), sdispls->data(), MPI_INT, b.d.data(),
                      recv_counts->data(), rdispls->data(), MPI_INT, w);
      },
      [=](Buffers& b, Mode m, OPTCOLL_Request* r) {
        return FORM(
            m, r,
            OPTCOLL_Ialltoallv(b.a.data(), send_counts->data(), sdispls->data(), MPI_INT,
                               b.b.data(), recv_counts->data(), rdispls->data(), MPI_INT, w, r),
            OPTCOLL_Alltoallv_init(b.a.data(), send_counts->data(), sdispls->data(), MPI_INT,
                                   b.b.data(), recv_counts->data(), rdispls->data(), MPI_INT, w,
                                   r));
      });
  add(
      "barrier", [](Buffers&, int) {}, [=](Buffers&) { MPI_Barrier(w); },
      [=](Buffers&, Mode m, OPTCOLL_Request* r) {
        return FORM(m, r, OPTCOLL_Ibarrier(w, r), OPTCOLL_Barrier_init(w, r));
      });
#undef FORM
  return cases;
}

void check_nonblocking(std::vector<Case>& cases, int round) {
  std::vector<OPTCOLL_Request> requests;
  for (Case& c : cases) {
    c.fill(round);
    c.mpi();
  }
  for (Case& c : cases) {
    OPTCOLL_Request r = OPTCOLL_REQUEST_NULL;
    expect(c.ours(Mode::kNonblocking, &r) == MPI_SUCCESS && r != OPTCOLL_REQUEST_NULL,
           "start nonblocking " + c.name);
    requests.push_back(r);
  }
  // Test once (progress), then wait for all in the order started.
  int flag = 0;
  expect(OPTCOLL_Test(&requests.back(), &flag) == MPI_SUCCESS, "test");
  expect(OPTCOLL_Waitall(static_cast<int>(requests.size()), requests.data()) == MPI_SUCCESS,
         "waitall");
  for (const OPTCOLL_Request r : requests) expect(r == OPTCOLL_REQUEST_NULL, "freed at completion");
  for (Case& c : cases) {
    expect(c.same(), "nonblocking " + c.name + " round " + std::to_string(round));
  }
}

void check_persistent(std::vector<Case>& cases) {
  std::vector<OPTCOLL_Request> requests;
  for (Case& c : cases) {
    c.fill(0);
    OPTCOLL_Request r = OPTCOLL_REQUEST_NULL;
    expect(c.ours(Mode::kPersistent, &r) == MPI_SUCCESS && r != OPTCOLL_REQUEST_NULL,
           "init " + c.name);
    requests.push_back(r);
  }
  for (int round = 0; round < 3; ++round) {
    for (Case& c : cases) {
      c.fill(round);
      c.mpi();
    }
    for (auto& r : requests) expect(OPTCOLL_Start(&r) == MPI_SUCCESS, "start");
    // Started twice without a wait: an error naming it, the request stays active.
    const int twice = OPTCOLL_Start(&requests.front());
    expect(twice != MPI_SUCCESS && std::strstr(OPTCOLL_Last_error(), "already active") != nullptr,
           "a second start is refused");
    expect(OPTCOLL_Request_free(&requests.front()) != MPI_SUCCESS &&
               std::strstr(OPTCOLL_Last_error(), "active request") != nullptr,
           "freeing an active request is refused");
    expect(OPTCOLL_Waitall(static_cast<int>(requests.size()), requests.data()) == MPI_SUCCESS,
           "waitall persistent");
    for (std::size_t i = 0; i < cases.size(); ++i) {
      expect(requests[i] != OPTCOLL_REQUEST_NULL, "persistent kept");
      expect(cases[i].same(), "persistent " + cases[i].name + " round " + std::to_string(round));
    }
  }
  for (auto& r : requests) {
    expect(OPTCOLL_Request_free(&r) == MPI_SUCCESS && r == OPTCOLL_REQUEST_NULL, "free");
  }
}

void check_misuse() {
  int x = g_rank;
  int y = 0;
  OPTCOLL_Request r = OPTCOLL_REQUEST_NULL;
  expect(OPTCOLL_Iallreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r) == MPI_SUCCESS,
         "iallreduce");
  expect(OPTCOLL_Start(&r) != MPI_SUCCESS &&
             std::strstr(OPTCOLL_Last_error(), "only persistent requests") != nullptr,
         "starting a nonblocking request is refused");
  expect(OPTCOLL_Wait(&r) == MPI_SUCCESS && y == g_size * (g_size - 1) / 2, "wait");
  expect(OPTCOLL_Wait(&r) == MPI_SUCCESS, "waiting for a null request");
  int one = 1;
  std::vector<int> ones(static_cast<std::size_t>(g_size), 1),
      displs(static_cast<std::size_t>(g_size));
  for (int i = 0; i < g_size; ++i) displs[static_cast<std::size_t>(i)] = i;
  std::vector<int> out(static_cast<std::size_t>(g_size));
  // A nonblocking alltoallv runs from each rank's own counts (linear or pairwise): one forced
  // to an algorithm that needs the whole count matrix is refused, naming the alternatives.
  expect(OPTCOLL_Set_algorithm("alltoallv", "node_aware") == MPI_SUCCESS, "force node_aware");
  expect(
      OPTCOLL_Ialltoallv(ones.data(), ones.data(), displs.data(), MPI_INT, out.data(), ones.data(),
                         displs.data(), MPI_INT, MPI_COMM_WORLD, &r) != MPI_SUCCESS &&
          r == OPTCOLL_REQUEST_NULL &&
          std::strstr(OPTCOLL_Last_error(), "alltoallv/node_aware") != nullptr &&
          std::strstr(OPTCOLL_Last_error(), "OPTCOLL_Alltoallv_init") != nullptr,
      "a nonblocking alltoallv forced to node_aware is refused, naming the alternatives");
  expect(OPTCOLL_Set_algorithm("alltoallv", "pairwise") == MPI_SUCCESS, "force pairwise");
  std::vector<int> mine(static_cast<std::size_t>(g_size), g_rank);
  expect(
      OPTCOLL_Ialltoallv(mine.data(), ones.data(), displs.data(), MPI_INT, out.data(), ones.data(),
                         displs.data(), MPI_INT, MPI_COMM_WORLD, &r) == MPI_SUCCESS &&
          OPTCOLL_Wait(&r) == MPI_SUCCESS,
      "a nonblocking alltoallv forced to pairwise");
  for (int i = 0; i < g_size; ++i) {
    expect(out[static_cast<std::size_t>(i)] == i, "pairwise: rank i's block from rank i");
  }
  expect(OPTCOLL_Set_algorithm("alltoallv", "auto") == MPI_SUCCESS, "reset alltoallv");
  expect(OPTCOLL_Start(nullptr) != MPI_SUCCESS, "a NULL request pointer");
  // A persistent request on a communicator freed afterwards refuses to start.
  MPI_Comm dup = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
  OPTCOLL_Request kept = OPTCOLL_REQUEST_NULL;
  expect(OPTCOLL_Allreduce_init(&one, &y, 1, MPI_INT, MPI_SUM, dup, &kept) == MPI_SUCCESS,
         "init on a duplicate");
  MPI_Comm_free(&dup);
  expect(OPTCOLL_Start(&kept) != MPI_SUCCESS &&
             std::strstr(OPTCOLL_Last_error(), "was freed") != nullptr,
         "a request whose communicator was freed refuses to start");
  expect(OPTCOLL_Request_free(&kept) == MPI_SUCCESS, "and can be freed");
}

// With OPTCOLL_PROGRESS_THREAD=1 (set by ctest) a collective completes while rank 0
// computes and makes no optcoll call: the other ranks' waits end long before rank 0 comes
// back (without the thread they last until it does: every rank's result needs rank 0's
// messages).
// A ring allreduce: every rank forwards in every step, so none completes on what rank 0
// sent when it started.
void check_progress_while_away() {
  constexpr double kAwaySeconds = 0.6;
  constexpr int kCount = 3000;
  std::vector<std::int64_t> mine(kCount, g_rank + 1);
  std::vector<std::int64_t> sum(kCount, 0);
  OPTCOLL_Request r = OPTCOLL_REQUEST_NULL;
  expect(OPTCOLL_Set_algorithm("allreduce", "ring") == MPI_SUCCESS, "set ring");
  MPI_Barrier(MPI_COMM_WORLD);
  const double start = MPI_Wtime();
  expect(OPTCOLL_Iallreduce(mine.data(), sum.data(), kCount, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD,
                            &r) == MPI_SUCCESS,
         "iallreduce with a progress thread");
  if (g_rank == 0) {
    std::this_thread::sleep_for(std::chrono::duration<double>(kAwaySeconds));
  }
  expect(OPTCOLL_Wait(&r) == MPI_SUCCESS, "wait with a progress thread");
  const double waited = MPI_Wtime() - start;
  const std::int64_t total = static_cast<std::int64_t>(g_size) * (g_size + 1) / 2;
  expect(sum == std::vector<std::int64_t>(kCount, total), "the sum");
  expect(OPTCOLL_Set_algorithm("allreduce", "auto") == MPI_SUCCESS, "set auto");
  if (g_rank != 0) {
    expect(waited < kAwaySeconds / 2,
           "completed while rank 0 was away (waited " + std::to_string(waited) + " s)");
  }
}

// Without MPI_THREAD_MULTIPLE the setting is refused at the first nonblocking start, naming
// the thread level.
int run_progress_thread_refused() {
  std::int64_t mine = 1;
  std::int64_t sum = 0;
  OPTCOLL_Request r = OPTCOLL_REQUEST_NULL;
  const int rc = OPTCOLL_Iallreduce(&mine, &sum, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD, &r);
  expect(rc != MPI_SUCCESS && std::strstr(OPTCOLL_Last_error(), "MPI_THREAD_MULTIPLE") != nullptr,
         "a progress thread without MPI_THREAD_MULTIPLE is refused");
  if (g_rank == 0) std::printf("progress thread refused: %s\n", OPTCOLL_Last_error());
  return g_failures;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "progress-thread") {
    int provided = MPI_THREAD_SINGLE;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    expect(provided == MPI_THREAD_MULTIPLE, "MPI_THREAD_MULTIPLE provided");
  } else {
    MPI_Init(&argc, &argv);
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  if (mode == "progress-thread-refused") {
    const int failures = run_progress_thread_refused();
    MPI_Finalize();
    return failures == 0 ? 0 : 1;
  }
  if (mode == "progress-thread") check_progress_while_away();
  std::vector<Case> cases = make_cases();
  for (int round = 0; round < 2; ++round) check_nonblocking(cases, round);
  check_persistent(cases);
  // gatherv/scatterv with the count exchange at init: force a tree (auto runs linear at
  // small p without the exchange).
  expect(OPTCOLL_Set_algorithm("gatherv", "binomial") == MPI_SUCCESS &&
             OPTCOLL_Set_algorithm("scatterv", "binomial") == MPI_SUCCESS,
         "set binomial");
  check_persistent(cases);
  check_nonblocking(cases, 5);  // (nonblocking gatherv/scatterv: linear, without exchange)
  check_misuse();
  int failures = 0;
  MPI_Allreduce(&g_failures, &failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (g_rank == 0) {
    std::printf("C API requests: %d checks per rank on %d ranks, %d failures\n", g_checks, g_size,
                failures);
  }
  MPI_Finalize();
  return failures == 0 ? 0 : 1;
}
