// SPDX-License-Identifier: Apache-2.0
// File: the C API (include/optcoll.h) under mpirun: every OPTCOLL_* call against the MPI
// library's own collective on the same integer data, compared bit for bit over the whole
// receive buffer (gaps between displacements included), for every root, counts with zeros,
// irregular counts, displacements out of rank order, MPI_IN_PLACE, several datatypes
// (MPI_INT, MPI_LONG_LONG, MPI_UNSIGNED_SHORT, a contiguous derived type; scan and exscan too),
// built-in operators (optcoll's kernels and MPI_Reduce_local's) and a non-commutative user MPI_Op.
// Then the errors: wrong root, negative count, non-contiguous datatype, NULL buffers,
// inconsistent counts (the mistaken rank fails, alone or telling the others; the next call
// works again), bad
// settings. Exit 0 when every rank saw what it should.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <numeric>
#include <string>
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
    std::fprintf(stderr, "rank %d: FAILED %s\n", g_rank, what.c_str());
  }
}

// Distinct, rank- and round-dependent bytes.
template <typename T>
std::vector<T> data(std::size_t n, int round, int salt = 0) {
  std::vector<T> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    v[i] = static_cast<T>((g_rank + 1) * 1000003 + static_cast<int>(i) * 7919 + round * 31 + salt);
  }
  return v;
}

template <typename T>
bool same(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

// The irregular counts of a round: zeros, ones and larger, rank dependent.
std::vector<int> irregular(int round) {
  std::vector<int> c(static_cast<std::size_t>(g_size));
  for (int r = 0; r < g_size; ++r)
    c[static_cast<std::size_t>(r)] = ((r + round) % 3 == 0) ? 0 : (r * 37 + round * 11) % 97 + 1;
  return c;
}

// Displacements in reverse rank order with gaps of 3 elements: not packed.
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

std::vector<int> packed_displs(const std::vector<int>& counts, int* total) {
  std::vector<int> d(counts.size());
  int at = 0;
  for (std::size_t i = 0; i < counts.size(); ++i) {
    d[i] = at;
    at += counts[i];
  }
  *total = at;
  return d;
}

using Displs = std::function<std::vector<int>(const std::vector<int>&, int*)>;

// 2x2 integer matrix product, row-major: not commutative.
void mat2_product(void* in, void* inout, int* len, MPI_Datatype*) {
  const auto* a = static_cast<const std::int32_t*>(in);
  auto* b = static_cast<std::int32_t*>(inout);
  for (int k = 0; k < *len; ++k, a += 4, b += 4) {
    const std::int32_t r0 = a[0] * b[0] + a[1] * b[2];
    const std::int32_t r1 = a[0] * b[1] + a[1] * b[3];
    const std::int32_t r2 = a[2] * b[0] + a[3] * b[2];
    const std::int32_t r3 = a[2] * b[1] + a[3] * b[3];
    b[0] = r0;
    b[1] = r1;
    b[2] = r2;
    b[3] = r3;
  }
}

template <typename T>
void check_reductions(MPI_Datatype type, MPI_Op op, const char* name, int elems_per_item,
                      int round) {
  for (const int count : {0, 1, 5, 1000}) {
    const auto n = static_cast<std::size_t>(count * elems_per_item);
    const std::string tag = std::string(name) + " count " + std::to_string(count);
    std::vector<T> in = data<T>(n, round);
    if (elems_per_item == 4) {  // small matrix entries keep products readable
      for (auto& x : in) x = static_cast<T>(x % 5);
    }
    {
      std::vector<T> a(n, T(7)), b(n, T(7));
      expect(
          OPTCOLL_Allreduce(in.data(), a.data(), count, type, op, MPI_COMM_WORLD) == MPI_SUCCESS &&
              MPI_Allreduce(in.data(), b.data(), count, type, op, MPI_COMM_WORLD) == MPI_SUCCESS &&
              same(a, b),
          "allreduce " + tag);
      std::vector<T> c = in, d = in;  // in place
      OPTCOLL_Allreduce(MPI_IN_PLACE, c.data(), count, type, op, MPI_COMM_WORLD);
      MPI_Allreduce(MPI_IN_PLACE, d.data(), count, type, op, MPI_COMM_WORLD);
      expect(same(c, d), "allreduce in place " + tag);
    }
    {  // scan and exscan (MPI leaves exscan's rank-0 output undefined: not compared)
      std::vector<T> a(n, T(7)), b(n, T(7));
      OPTCOLL_Scan(in.data(), a.data(), count, type, op, MPI_COMM_WORLD);
      MPI_Scan(in.data(), b.data(), count, type, op, MPI_COMM_WORLD);
      expect(same(a, b), "scan " + tag);
      std::vector<T> c = in, d = in;
      OPTCOLL_Scan(MPI_IN_PLACE, c.data(), count, type, op, MPI_COMM_WORLD);
      MPI_Scan(MPI_IN_PLACE, d.data(), count, type, op, MPI_COMM_WORLD);
      expect(same(c, d), "scan in place " + tag);
      std::vector<T> e(n, T(7)), f(n, T(7));
      OPTCOLL_Exscan(in.data(), e.data(), count, type, op, MPI_COMM_WORLD);
      MPI_Exscan(in.data(), f.data(), count, type, op, MPI_COMM_WORLD);
      expect(g_rank == 0 ? e == std::vector<T>(n, T(7)) : same(e, f), "exscan " + tag);
    }
    for (int root = 0; root < g_size; ++root) {
      std::vector<T> a(n, T(7)), b(n, T(7));
      OPTCOLL_Reduce(in.data(), a.data(), count, type, op, root, MPI_COMM_WORLD);
      MPI_Reduce(in.data(), b.data(), count, type, op, root, MPI_COMM_WORLD);
      expect(same(a, b), "reduce root " + std::to_string(root) + " " + tag);
      std::vector<T> c = in, d = in;
      const bool at_root = g_rank == root;
      OPTCOLL_Reduce(at_root ? MPI_IN_PLACE : in.data(), c.data(), count, type, op, root,
                     MPI_COMM_WORLD);
      MPI_Reduce(at_root ? MPI_IN_PLACE : in.data(), d.data(), count, type, op, root,
                 MPI_COMM_WORLD);
      expect(same(c, d), "reduce in place root " + std::to_string(root) + " " + tag);
    }
    {  // reduce_scatter_block: count per rank
      const std::vector<T> big = data<T>(n * static_cast<std::size_t>(g_size), round, 5);
      std::vector<T> block_in = big;
      if (elems_per_item == 4)
        for (auto& x : block_in) x = static_cast<T>(x % 5);
      std::vector<T> a(n, T(7)), b(n, T(7));
      OPTCOLL_Reduce_scatter_block(block_in.data(), a.data(), count, type, op, MPI_COMM_WORLD);
      MPI_Reduce_scatter_block(block_in.data(), b.data(), count, type, op, MPI_COMM_WORLD);
      expect(same(a, b), "reduce_scatter_block " + tag);
      std::vector<T> c = block_in, d = block_in;
      OPTCOLL_Reduce_scatter_block(MPI_IN_PLACE, c.data(), count, type, op, MPI_COMM_WORLD);
      MPI_Reduce_scatter_block(MPI_IN_PLACE, d.data(), count, type, op, MPI_COMM_WORLD);
      c.resize(n);
      d.resize(n);
      expect(same(c, d), "reduce_scatter_block in place " + tag);
    }
  }
  {  // reduce_scatter with irregular counts
    const std::vector<int> counts = irregular(round);
    const int total = std::accumulate(counts.begin(), counts.end(), 0);
    std::vector<T> in = data<T>(static_cast<std::size_t>(total * elems_per_item), round, 9);
    if (elems_per_item == 4)
      for (auto& x : in) x = static_cast<T>(x % 5);
    const auto mine =
        static_cast<std::size_t>(counts[static_cast<std::size_t>(g_rank)] * elems_per_item);
    std::vector<T> a(mine, T(7)), b(mine, T(7));
    OPTCOLL_Reduce_scatter(in.data(), a.data(), counts.data(), type, op, MPI_COMM_WORLD);
    MPI_Reduce_scatter(in.data(), b.data(), counts.data(), type, op, MPI_COMM_WORLD);
    expect(same(a, b), std::string("reduce_scatter ") + name);
  }
}

void check_rooted_movement(int round, const Displs& displs_of, const char* layout) {
  for (int root = 0; root < g_size; ++root) {
    const std::string tag = std::string(" root ") + std::to_string(root) + " " + layout;
    for (const int count : {0, 3, 1000}) {  // bcast, gather, scatter
      std::vector<std::int32_t> a = data<std::int32_t>(static_cast<std::size_t>(count), round);
      std::vector<std::int32_t> b = a;
      OPTCOLL_Bcast(a.data(), count, MPI_INT, root, MPI_COMM_WORLD);
      MPI_Bcast(b.data(), count, MPI_INT, root, MPI_COMM_WORLD);
      expect(same(a, b), "bcast count " + std::to_string(count) + tag);
      const auto n = static_cast<std::size_t>(count);
      const auto all = n * static_cast<std::size_t>(g_size);
      const std::vector<std::int32_t> in = data<std::int32_t>(n, round, 1);
      std::vector<std::int32_t> g1(all, -1), g2(all, -1);
      OPTCOLL_Gather(in.data(), count, MPI_INT, g1.data(), count, MPI_INT, root, MPI_COMM_WORLD);
      MPI_Gather(in.data(), count, MPI_INT, g2.data(), count, MPI_INT, root, MPI_COMM_WORLD);
      expect(same(g1, g2), "gather count " + std::to_string(count) + tag);
      const std::vector<std::int32_t> source = data<std::int32_t>(all, round, 2);
      std::vector<std::int32_t> s1(n, -1), s2(n, -1);
      OPTCOLL_Scatter(source.data(), count, MPI_INT, s1.data(), count, MPI_INT, root,
                      MPI_COMM_WORLD);
      MPI_Scatter(source.data(), count, MPI_INT, s2.data(), count, MPI_INT, root, MPI_COMM_WORLD);
      expect(same(s1, s2), "scatter count " + std::to_string(count) + tag);
    }
    const std::vector<int> counts = irregular(round + root);
    int total = 0;
    const std::vector<int> displs = displs_of(counts, &total);
    const auto me = static_cast<std::size_t>(g_rank);
    const std::vector<std::int32_t> in =
        data<std::int32_t>(static_cast<std::size_t>(counts[me]), round, 3);
    // gatherv: MPI semantics (counts at the root only), the known-counts path, in place
    std::vector<std::int32_t> a(static_cast<std::size_t>(total), -1), b = a, c = a;
    const bool at_root = g_rank == root;
    OPTCOLL_Gatherv(in.data(), counts[me], MPI_INT, a.data(), at_root ? counts.data() : nullptr,
                    at_root ? displs.data() : nullptr, MPI_INT, root, MPI_COMM_WORLD);
    MPI_Gatherv(in.data(), counts[me], MPI_INT, b.data(), counts.data(), displs.data(), MPI_INT,
                root, MPI_COMM_WORLD);
    OPTCOLL_Gatherv_known(in.data(), counts[me], MPI_INT, c.data(), counts.data(), displs.data(),
                          MPI_INT, root, MPI_COMM_WORLD);
    expect(same(a, b), "gatherv" + tag);
    expect(same(c, b), "gatherv_known" + tag);
    std::vector<std::int32_t> d = b;  // the root's own block already in place
    if (at_root)
      std::fill(d.begin(), d.end(), -1), std::copy(in.begin(), in.end(), d.begin() + displs[me]);
    std::vector<std::int32_t> e = d;
    OPTCOLL_Gatherv(at_root ? MPI_IN_PLACE : in.data(), counts[me], MPI_INT, d.data(),
                    counts.data(), displs.data(), MPI_INT, root, MPI_COMM_WORLD);
    MPI_Gatherv(at_root ? MPI_IN_PLACE : in.data(), counts[me], MPI_INT, e.data(), counts.data(),
                displs.data(), MPI_INT, root, MPI_COMM_WORLD);
    expect(same(d, e), "gatherv in place" + tag);
    // scatterv
    const std::vector<std::int32_t> source =
        data<std::int32_t>(static_cast<std::size_t>(total), round, 4);
    std::vector<std::int32_t> s1(static_cast<std::size_t>(counts[me]), -1), s2 = s1, s3 = s1;
    OPTCOLL_Scatterv(source.data(), at_root ? counts.data() : nullptr,
                     at_root ? displs.data() : nullptr, MPI_INT, s1.data(), counts[me], MPI_INT,
                     root, MPI_COMM_WORLD);
    MPI_Scatterv(source.data(), counts.data(), displs.data(), MPI_INT, s2.data(), counts[me],
                 MPI_INT, root, MPI_COMM_WORLD);
    OPTCOLL_Scatterv_known(source.data(), counts.data(), displs.data(), MPI_INT, s3.data(),
                           counts[me], MPI_INT, root, MPI_COMM_WORLD);
    expect(same(s1, s2), "scatterv" + tag);
    expect(same(s3, s2), "scatterv_known" + tag);
  }
}

void check_unrooted_movement(int round, const Displs& displs_of, const char* layout) {
  const auto me = static_cast<std::size_t>(g_rank);
  const auto p = static_cast<std::size_t>(g_size);
  for (const int count : {0, 1, 513}) {
    const auto n = static_cast<std::size_t>(count);
    const std::string tag = " count " + std::to_string(count);
    const std::vector<std::int64_t> in = data<std::int64_t>(n, round, 6);
    std::vector<std::int64_t> a(n * p, -1), b = a;
    OPTCOLL_Allgather(in.data(), count, MPI_LONG_LONG, a.data(), count, MPI_LONG_LONG,
                      MPI_COMM_WORLD);
    MPI_Allgather(in.data(), count, MPI_LONG_LONG, b.data(), count, MPI_LONG_LONG, MPI_COMM_WORLD);
    expect(same(a, b), "allgather" + tag);
    std::vector<std::int64_t> c(n * p, -1);
    std::copy(in.begin(), in.end(), c.begin() + static_cast<std::ptrdiff_t>(n * me));
    OPTCOLL_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, c.data(), count, MPI_LONG_LONG,
                      MPI_COMM_WORLD);
    expect(same(c, b), "allgather in place" + tag);
    const std::vector<std::int64_t> all_in = data<std::int64_t>(n * p, round, 7);
    std::vector<std::int64_t> t1(n * p, -1), t2 = t1;
    OPTCOLL_Alltoall(all_in.data(), count, MPI_LONG_LONG, t1.data(), count, MPI_LONG_LONG,
                     MPI_COMM_WORLD);
    MPI_Alltoall(all_in.data(), count, MPI_LONG_LONG, t2.data(), count, MPI_LONG_LONG,
                 MPI_COMM_WORLD);
    expect(same(t1, t2), "alltoall" + tag);
    std::vector<std::int64_t> t3 = all_in, t4 = all_in;
    OPTCOLL_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, t3.data(), count, MPI_LONG_LONG,
                     MPI_COMM_WORLD);
    MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, t4.data(), count, MPI_LONG_LONG,
                 MPI_COMM_WORLD);
    expect(same(t3, t4), "alltoall in place" + tag);
  }
  // allgatherv
  const std::vector<int> counts = irregular(round);
  int total = 0;
  const std::vector<int> displs = displs_of(counts, &total);
  const std::vector<std::int64_t> in =
      data<std::int64_t>(static_cast<std::size_t>(counts[me]), round, 8);
  std::vector<std::int64_t> a(static_cast<std::size_t>(total), -1), b = a;
  OPTCOLL_Allgatherv(in.data(), counts[me], MPI_LONG_LONG, a.data(), counts.data(), displs.data(),
                     MPI_LONG_LONG, MPI_COMM_WORLD);
  MPI_Allgatherv(in.data(), counts[me], MPI_LONG_LONG, b.data(), counts.data(), displs.data(),
                 MPI_LONG_LONG, MPI_COMM_WORLD);
  expect(same(a, b), std::string("allgatherv ") + layout);
  // alltoallv: rank i sends (i + j + round) % 4 * 3 elements to rank j
  std::vector<int> sc(p), rc(p);
  for (std::size_t j = 0; j < p; ++j) {
    sc[j] = static_cast<int>((me + j + static_cast<std::size_t>(round)) % 4 * 3);
    rc[j] = static_cast<int>((j + me + static_cast<std::size_t>(round)) % 4 * 3);
  }
  int stotal = 0;
  int rtotal = 0;
  const std::vector<int> sd = displs_of(sc, &stotal);
  const std::vector<int> rd = displs_of(rc, &rtotal);
  const std::vector<std::int64_t> vin =
      data<std::int64_t>(static_cast<std::size_t>(stotal), round, 9);
  std::vector<std::int64_t> expected(static_cast<std::size_t>(rtotal), -1);
  MPI_Alltoallv(vin.data(), sc.data(), sd.data(), MPI_LONG_LONG, expected.data(), rc.data(),
                rd.data(), MPI_LONG_LONG, MPI_COMM_WORLD);
  // auto (the count matrix exchanged at p > 2), and the two algorithms that need only each
  // rank's row and column, without it (optcoll/plan/counts_free.h).
  for (const char* algorithm : {"auto", "linear", "pairwise"}) {
    expect(OPTCOLL_Set_algorithm("alltoallv", algorithm) == MPI_SUCCESS, "set alltoallv");
    std::vector<std::int64_t> got(static_cast<std::size_t>(rtotal), -1);
    OPTCOLL_Alltoallv(vin.data(), sc.data(), sd.data(), MPI_LONG_LONG, got.data(), rc.data(),
                      rd.data(), MPI_LONG_LONG, MPI_COMM_WORLD);
    expect(same(got, expected), std::string("alltoallv ") + algorithm + " " + layout);
  }
  expect(OPTCOLL_Set_algorithm("alltoallv", "auto") == MPI_SUCCESS, "reset alltoallv");
  expect(OPTCOLL_Barrier(MPI_COMM_WORLD) == MPI_SUCCESS, "barrier");
}

int error_class(int code) {
  int cls = -1;
  MPI_Error_class(code, &cls);
  return cls;
}

bool last_error_mentions(const char* text) {
  return std::strstr(OPTCOLL_Last_error(), text) != nullptr;
}

// A rank that found a mismatch in a message tells the others: each succeeded (it had
// finished the call) or failed at once, told by `teller` (it was still in the call).
// An alltoallv in which every rank sends one int (its rank) to every rank, but rank
// `mistaken` expects two from rank `from`: its return code, and `recvv` (filled with -5
// before the call, laid out packed by the receive counts).
int alltoallv_expecting_two(MPI_Comm comm, int mistaken, int from, std::vector<int>& recvv) {
  const auto n = static_cast<std::size_t>(g_size);
  std::vector<int> ones(n, 1), recv_counts(n, 1);
  if (g_rank == mistaken) recv_counts[static_cast<std::size_t>(from)] = 2;
  int sent = 0;
  int received = 0;
  const std::vector<int> send_displs = packed_displs(ones, &sent);
  const std::vector<int> recv_displs = packed_displs(recv_counts, &received);
  std::vector<int> sendv(n, g_rank);
  recvv.assign(static_cast<std::size_t>(received), -5);
  return OPTCOLL_Alltoallv(sendv.data(), ones.data(), send_displs.data(), MPI_INT, recvv.data(),
                           recv_counts.data(), recv_displs.data(), MPI_INT, comm);
}

bool succeeded_or_told(int rc, int teller) {
  const std::string told = "rank " + std::to_string(teller) + " failed: ";
  return rc == MPI_SUCCESS ||
         (error_class(rc) == MPI_ERR_OTHER && last_error_mentions(told.c_str()));
}

// A mistake every rank (or, where noted, one rank) makes: the mistaken ranks return
// `mpi_class` with a message containing `text`; every other rank fails too (it is told).
void expect_failure(int rc, bool mistaken, int mpi_class, const char* text,
                    const std::string& what) {
  if (mistaken) {
    expect(error_class(rc) == mpi_class && last_error_mentions(text),
           what + ": " + OPTCOLL_Last_error());
  } else {
    expect(rc != MPI_SUCCESS, what + " (told by the mistaken rank)");
    (void)mpi_class;
  }
}

void check_argument_errors(MPI_Comm comm) {
  const int p = g_size;
  const auto n = static_cast<std::size_t>(p);
  std::vector<int> ones(n, 1), zeros(n, 0), buffer(4 * n, 0);
  int value = 0;
  // Every non-root makes the mistake; the root needs them, so it fails too.
  int rc = OPTCOLL_Reduce(MPI_IN_PLACE, &value, 1, MPI_INT, MPI_SUM, 0, comm);
  if (p > 1)
    expect_failure(rc, g_rank != 0, MPI_ERR_BUFFER, "MPI_IN_PLACE as sendbuf off the root",
                   "reduce in place off the root");
  // Only the root's own counts disagree: it takes part, then fails alone; the others succeed.
  rc = OPTCOLL_Gather(buffer.data(), g_rank == 0 ? 2 : 1, MPI_INT, buffer.data() + 2, 1, MPI_INT, 0,
                      comm);
  if (g_rank == 0) {
    expect_failure(rc, true, MPI_ERR_COUNT, "bytes but receives",
                   "gather: root's sendcount != recvcount");
  } else {
    expect(rc == MPI_SUCCESS, "gather: the senders succeed");
  }
  rc = OPTCOLL_Scatter(buffer.data(), 1, MPI_INT, buffer.data() + n, g_rank == 0 ? 2 : 1, MPI_INT,
                       0, comm);
  if (g_rank == 0) {
    expect_failure(rc, true, MPI_ERR_COUNT, "bytes per rank but receives",
                   "scatter: root's sendcount != recvcount");
  } else {
    expect(rc == MPI_SUCCESS, "scatter: the receivers succeed");
  }
  rc = OPTCOLL_Allgather(buffer.data(), 2, MPI_INT, buffer.data() + 2, 1, MPI_INT, comm);
  expect_failure(rc, true, MPI_ERR_COUNT, "bytes but receives",
                 "allgather: sendcount != recvcount");
  rc = OPTCOLL_Alltoall(buffer.data(), 2, MPI_INT, buffer.data() + 2 * n, 1, MPI_INT, comm);
  expect_failure(rc, true, MPI_ERR_COUNT, "bytes per rank but receives",
                 "alltoall: sendcount != recvcount");
  rc = OPTCOLL_Gatherv_known(buffer.data(), 2, MPI_INT, buffer.data() + 2, ones.data(),
                             zeros.data(), MPI_INT, 0, comm);
  expect_failure(rc, true, MPI_ERR_COUNT, "bytes but recvcounts[",
                 "gatherv_known: sendcount != recvcounts[me]");
  rc = OPTCOLL_Scatterv_known(buffer.data(), ones.data(), zeros.data(), MPI_INT, buffer.data() + n,
                              2, MPI_INT, 0, comm);
  expect_failure(rc, true, MPI_ERR_COUNT, "bytes but sendcounts[",
                 "scatterv_known: recvcount != sendcounts[me]");
  rc = OPTCOLL_Allgatherv(buffer.data(), 1, MPI_INT, buffer.data() + n, ones.data(), nullptr,
                          MPI_INT, comm);
  expect_failure(rc, true, MPI_ERR_ARG, "displs is NULL", "allgatherv: displs NULL");
  rc = OPTCOLL_Allgatherv(buffer.data(), 1, MPI_INT, buffer.data() + n, nullptr, zeros.data(),
                          MPI_INT, comm);
  expect_failure(rc, true, MPI_ERR_COUNT, "recvcounts is NULL", "allgatherv: recvcounts NULL");
  rc = OPTCOLL_Alltoallv(MPI_IN_PLACE, nullptr, nullptr, MPI_DATATYPE_NULL, buffer.data(),
                         ones.data(), nullptr, MPI_INT, comm);
  expect_failure(rc, true, MPI_ERR_ARG, "rdispls is NULL", "alltoallv in place: rdispls NULL");
  rc = OPTCOLL_Bcast(buffer.data(), 1, MPI_DATATYPE_NULL, 0, comm);
  expect_failure(rc, true, MPI_ERR_TYPE, "is MPI_DATATYPE_NULL", "bcast: MPI_DATATYPE_NULL");
  MPI_Datatype empty = MPI_DATATYPE_NULL;
  MPI_Type_contiguous(0, MPI_INT, &empty);
  MPI_Type_commit(&empty);
  rc = OPTCOLL_Allreduce(buffer.data(), buffer.data() + 1, 1, empty, MPI_SUM, comm);
  expect_failure(rc, true, MPI_ERR_TYPE, "has size 0", "allreduce: zero-size datatype");
  MPI_Type_free(&empty);
  if (p > 1) {  // an inter-communicator between the even and the odd ranks
    MPI_Comm half = MPI_COMM_NULL;
    MPI_Comm inter = MPI_COMM_NULL;
    MPI_Comm_split(comm, g_rank % 2, g_rank, &half);
    MPI_Intercomm_create(half, 0, comm, g_rank % 2 == 0 ? 1 : 0, 77, &inter);
    MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
    rc = OPTCOLL_Barrier(inter);
    expect(error_class(rc) == MPI_ERR_COMM && last_error_mentions("inter-communicators"),
           "inter-communicator: MPI_ERR_COMM");
    MPI_Comm_free(&inter);
    MPI_Comm_free(&half);
  }
  expect(error_class(OPTCOLL_Set_algorithm(nullptr, "ring")) == MPI_ERR_ARG &&
             last_error_mentions("needs a collective and an algorithm"),
         "OPTCOLL_Set_algorithm(NULL, ...): MPI_ERR_ARG");
  const std::string bad_model = "capi_bad_model_" + std::to_string(g_rank) + ".json";
  if (FILE* f = std::fopen(bad_model.c_str(), "w")) {
    std::fputs("{\"alpha\": -1}", f);
    std::fclose(f);
  }
  expect(error_class(OPTCOLL_Set_model(bad_model.c_str())) == MPI_ERR_ARG &&
             last_error_mentions("model file '"),
         std::string("malformed model file: MPI_ERR_ARG: ") + OPTCOLL_Last_error());
  std::remove(bad_model.c_str());
  int one = 1;
  int sum = 0;
  rc = OPTCOLL_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, comm);
  expect(rc == MPI_SUCCESS && sum == p,
         std::string("the communicator works after the argument errors: ") + OPTCOLL_Last_error());
}

void check_errors() {
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  int value = 1;
  // Every rank makes the same mistake: each returns the error, nothing hangs.
  int rc = OPTCOLL_Bcast(&value, 1, MPI_INT, g_size, comm);
  expect(error_class(rc) == MPI_ERR_ROOT && last_error_mentions("root"), "bad root: MPI_ERR_ROOT");
  char message[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(rc, message, &length);
  expect(std::strstr(message, "root") != nullptr,
         std::string("MPI_Error_string names the root: ") + message);
  rc = OPTCOLL_Allreduce(&value, &value, -1, MPI_INT, MPI_SUM, comm);
  expect(error_class(rc) == MPI_ERR_COUNT, "negative count: MPI_ERR_COUNT");
  MPI_Datatype strided = MPI_DATATYPE_NULL;
  MPI_Type_vector(2, 1, 2, MPI_INT, &strided);
  MPI_Type_commit(&strided);
  int four[4] = {1, 2, 3, 4};
  rc = OPTCOLL_Bcast(four, 1, strided, 0, comm);
  expect(error_class(rc) == MPI_ERR_TYPE && last_error_mentions("not contiguous"),
         "strided datatype: MPI_ERR_TYPE");
  MPI_Type_free(&strided);
  rc = OPTCOLL_Allreduce(&value, &value, 1, MPI_INT, MPI_OP_NULL, comm);
  expect(error_class(rc) == MPI_ERR_OP, "MPI_OP_NULL: MPI_ERR_OP");
  rc = OPTCOLL_Bcast(nullptr, 4, MPI_INT, 0, comm);
  expect(error_class(rc) == MPI_ERR_BUFFER, "NULL buffer: MPI_ERR_BUFFER");
  rc = OPTCOLL_Bcast(&value, 1, MPI_INT, 0, MPI_COMM_NULL);
  expect(error_class(rc) == MPI_ERR_COMM, "MPI_COMM_NULL: MPI_ERR_COMM");
  // Only the root sees the mistake (its recvcounts disagree with what rank 1 sends). With the
  // count exchange (an algorithm other than linear forced): the root takes the data aside and
  // fails alone with MPI_ERR_COUNT, its recvbuf unchanged; the others succeed; the
  // communicator stays usable. Likewise a scatterv receiver that expects too little. Under
  // auto at p <= 5 (the reference model: linear without the exchange, docs/design.md, Selection)
  // the mismatched message itself fails at its receiver, naming both sizes, which tells the others:
  // each succeeds, or fails at once naming it (if it was still in the call); the communicator stays
  // usable too.
  if (g_size > 1) {
    std::vector<int> counts(static_cast<std::size_t>(g_size), 2);
    std::vector<int> displs(static_cast<std::size_t>(g_size));
    for (int r = 0; r < g_size; ++r) displs[static_cast<std::size_t>(r)] = 2 * r;
    counts[1] = 1;  // but rank 1 sends 2
    const int one = 1;
    int sum = 0;
    for (const bool exchange : {true, false}) {
      expect(OPTCOLL_Set_algorithm("gatherv", exchange ? "binomial" : "auto") == MPI_SUCCESS &&
                 OPTCOLL_Set_algorithm("scatterv", exchange ? "binomial" : "auto") == MPI_SUCCESS,
             "set the gatherv/scatterv algorithm");
      const std::string mode = exchange ? " (with the count exchange)" : " (linear, no exchange)";
      std::vector<int> out(static_cast<std::size_t>(2 * g_size), -5);
      const int two[2] = {g_rank, g_rank};
      rc = OPTCOLL_Gatherv(two, 2, MPI_INT, out.data(), counts.data(), displs.data(), MPI_INT, 0,
                           comm);
      if (g_rank == 0 && exchange) {
        expect(error_class(rc) == MPI_ERR_COUNT && last_error_mentions("rank 1 sends 8 bytes") &&
                   std::count(out.begin(), out.end(), -5) == 2 * g_size,
               "gatherv: the root names rank 1's count" + mode + ": " + OPTCOLL_Last_error());
      } else if (g_rank == 0) {
        // (MPI's truncation, or the same-node ring's check: "has 8 bytes, expected 4")
        expect(rc != MPI_SUCCESS && last_error_mentions("from rank 1") &&
                   (last_error_mentions("4 bytes expected") ||
                    last_error_mentions("has 8 bytes, expected 4")),
               "gatherv: the root names rank 1's message" + mode + ": " + OPTCOLL_Last_error());
      } else {
        expect(exchange ? rc == MPI_SUCCESS : succeeded_or_told(rc, 0),
               "gatherv: the senders succeed" + std::string(exchange ? "" : " or are told") + mode);
      }
      rc = OPTCOLL_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, comm);
      expect(rc == MPI_SUCCESS && sum == g_size,
             "the communicator works after a gatherv mismatch" + mode);
      // The root's own sendcount disagrees with its recvcounts[root]: it fails alone, in both
      // modes, its recvbuf unchanged.
      std::vector<int> right(static_cast<std::size_t>(g_size), 2);
      std::fill(out.begin(), out.end(), -5);
      rc = OPTCOLL_Gatherv(two, g_rank == 0 ? 1 : 2, MPI_INT, out.data(), right.data(),
                           displs.data(), MPI_INT, 0, comm);
      if (g_rank == 0) {
        expect(error_class(rc) == MPI_ERR_COUNT && last_error_mentions("rank 0 sends 4 bytes") &&
                   std::count(out.begin(), out.end(), -5) == 2 * g_size,
               "gatherv: the root names its own count" + mode + ": " + OPTCOLL_Last_error());
      } else {
        expect(rc == MPI_SUCCESS, "gatherv: the senders succeed when the root errs" + mode);
      }
      std::vector<int> source(static_cast<std::size_t>(2 * g_size), 9);
      int got[2] = {-5, -5};
      rc = OPTCOLL_Scatterv(source.data(), counts.data(), displs.data(), MPI_INT, got,
                            g_rank == 1 ? 2 : counts[static_cast<std::size_t>(g_rank)], MPI_INT, 0,
                            comm);
      if (g_rank == 1 && exchange) {
        expect(error_class(rc) == MPI_ERR_COUNT && last_error_mentions("receives 8 bytes") &&
                   got[0] == -5,
               "scatterv: rank 1 names its count" + mode + ": " + OPTCOLL_Last_error());
      } else if (g_rank == 1) {
        expect(rc != MPI_SUCCESS && last_error_mentions("has 4 bytes, expected 8"),
               "scatterv: rank 1 names both sizes" + mode + ": " + OPTCOLL_Last_error());
      } else {
        expect(exchange ? rc == MPI_SUCCESS : succeeded_or_told(rc, 1),
               "scatterv: the others succeed" + std::string(exchange ? "" : " or are told") + mode);
      }
      rc = OPTCOLL_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, comm);
      expect(rc == MPI_SUCCESS && sum == g_size,
             "the communicator works after a scatterv mismatch" + mode);
    }
    // alltoallv: every rank sends 1 element to every rank, but rank 1 expects 2 from rank 0.
    // With the count exchange (auto at p > 2): rank 1 takes the data aside and fails alone,
    // its recvbuf unchanged; the others succeed. Without it (forced linear, or p = 2): rank 1's
    // receive from rank 0 fails naming both sizes, which tells the others (each succeeds, or
    // fails at once naming rank 1).
    for (const bool exchange : {true, false}) {
      expect(OPTCOLL_Set_algorithm("alltoallv", exchange ? "auto" : "linear") == MPI_SUCCESS,
             "set the alltoallv algorithm");
      const bool exchanged = exchange && g_size > 2;
      const std::string mode = exchanged ? " (with the count exchange)" : " (no exchange)";
      std::vector<int> recvv;
      rc = alltoallv_expecting_two(comm, 1, 0, recvv);
      if (g_rank == 1 && exchanged) {
        expect(error_class(rc) == MPI_ERR_COUNT &&
                   last_error_mentions("rank 0 sends 4 bytes to rank 1 but recvcounts[0] says 8") &&
                   std::count(recvv.begin(), recvv.end(), -5) ==
                       static_cast<std::ptrdiff_t>(recvv.size()),
               "alltoallv: rank 1 names rank 0's count" + mode + ": " + OPTCOLL_Last_error());
      } else if (g_rank == 1) {
        expect(rc != MPI_SUCCESS && last_error_mentions("from rank 0") &&
                   last_error_mentions("has 4 bytes, expected 8"),
               "alltoallv: rank 1 names rank 0's message" + mode + ": " + OPTCOLL_Last_error());
      } else {
        expect(
            exchanged ? rc == MPI_SUCCESS : succeeded_or_told(rc, 1),
            "alltoallv: the others succeed" + std::string(exchanged ? "" : " or are told") + mode);
      }
      rc = OPTCOLL_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, comm);
      expect(rc == MPI_SUCCESS && sum == g_size,
             "the communicator works after an alltoallv mismatch" + mode);
    }
    // Without the exchange, rank 0's block to itself given two sizes (sends 1 element,
    // recvcounts[0] says 2): rank 0 fails alone with MPI_ERR_COUNT, its recvbuf unchanged;
    // the others succeed.
    {
      expect(OPTCOLL_Set_algorithm("alltoallv", "linear") == MPI_SUCCESS, "force linear");
      std::vector<int> recvv;
      rc = alltoallv_expecting_two(comm, 0, 0, recvv);
      if (g_rank == 0) {
        expect(error_class(rc) == MPI_ERR_COUNT &&
                   last_error_mentions("rank 0 sends 4 bytes to rank 0 but recvcounts[0] says 8") &&
                   std::count(recvv.begin(), recvv.end(), -5) ==
                       static_cast<std::ptrdiff_t>(recvv.size()),
               std::string("alltoallv: rank 0 names its own block (no exchange): ") +
                   OPTCOLL_Last_error());
      } else {
        expect(rc == MPI_SUCCESS && recvv[0] == 0,
               "alltoallv: the others succeed when rank 0 errs on its own block");
      }
      rc = OPTCOLL_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, comm);
      expect(rc == MPI_SUCCESS && sum == g_size,
             "the communicator works after rank 0's own-block mismatch");
    }
    expect(OPTCOLL_Set_algorithm("alltoallv", "auto") == MPI_SUCCESS, "reset alltoallv");
    // A mistake only one rank makes before communicating, in a call where every rank needs
    // every other: it tells the others, every rank fails this call (none waits for its
    // timeout), and the next call works everywhere. (Ranks that do not need the failed one
    // may finish the call; they ignore its notice: MpiTransport::begin_call.)
    const int count = g_rank == g_size - 1 ? -1 : 1;
    rc = OPTCOLL_Allreduce(&one, &sum, count, MPI_INT, MPI_SUM, comm);
    expect(rc != MPI_SUCCESS, "allreduce with one rank's negative count fails on every rank");
    if (g_rank == g_size - 1) {
      expect(error_class(rc) == MPI_ERR_COUNT, "the rank with the negative count: MPI_ERR_COUNT");
    } else {
      expect(error_class(rc) == MPI_ERR_OTHER &&
                 last_error_mentions(("rank " + std::to_string(g_size - 1) + " failed").c_str()),
             std::string("the others name the failed rank: ") + OPTCOLL_Last_error());
    }
    rc = OPTCOLL_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, comm);
    expect(rc == MPI_SUCCESS && sum == g_size,
           std::string("the communicator works again after a failure: ") + OPTCOLL_Last_error());
  }
  check_argument_errors(comm);
  expect(error_class(OPTCOLL_Set_algorithm("allreduce", "no_such")) == MPI_ERR_ARG &&
             last_error_mentions("no_such"),
         "unknown algorithm: MPI_ERR_ARG");
  expect(error_class(OPTCOLL_Set_algorithm("allreducer", "ring")) == MPI_ERR_ARG,
         "unknown collective: MPI_ERR_ARG");
  expect(error_class(OPTCOLL_Set_model("/nonexistent/model.json")) == MPI_ERR_ARG &&
             last_error_mentions("/nonexistent/model.json"),
         "missing model file: MPI_ERR_ARG");
  expect(error_class(OPTCOLL_Set_timeout(0)) == MPI_ERR_ARG, "zero timeout: MPI_ERR_ARG");
  MPI_Comm_free(&comm);
}

// Communicators made and freed between calls, and calls that alternate between two: each
// call must run on its own communicator's context (the C API remembers the last one; MPI
// may hand a freed communicator's handle to the next one made).
void check_communicator_turnover() {
  for (int round = 0; round < 6; ++round) {
    MPI_Comm mine = MPI_COMM_NULL;
    if (round % 2 == 0) {
      MPI_Comm_dup(MPI_COMM_WORLD, &mine);
    } else {  // halves: ranks of one parity each
      MPI_Comm_split(MPI_COMM_WORLD, g_rank % 2, g_rank, &mine);
    }
    MPI_Comm_set_errhandler(mine, MPI_ERRORS_RETURN);
    int size = 0;
    MPI_Comm_size(mine, &size);
    const int one = 1;
    for (int call = 0; call < 3; ++call) {
      int here = 0;
      int world = 0;
      const int rc = OPTCOLL_Allreduce(&one, &here, 1, MPI_INT, MPI_SUM, mine);
      const int rc_world = OPTCOLL_Allreduce(&one, &world, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
      expect(rc == MPI_SUCCESS && here == size && rc_world == MPI_SUCCESS && world == g_size,
             "round " + std::to_string(round) + ": a sum over a fresh communicator of " +
                 std::to_string(size) + " ranks gave " + std::to_string(here) +
                 ", over the world " + std::to_string(world));
    }
    MPI_Comm_free(&mine);
  }
}

}  // namespace

int main(int argc, char** argv) {
  // Before MPI_Init: an error, not a crash.
  const bool refused_before_init =
      OPTCOLL_Barrier(MPI_COMM_WORLD) != MPI_SUCCESS && last_error_mentions("before initializing");
  MPI_Init(&argc, &argv);
  expect(refused_before_init, "a call before MPI_Init is refused");
  if (argc > 1 && std::strcmp(argv[1], "bad-timeout-env") == 0) {  // OPTCOLL_TIMEOUT_MS=abc
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    const int rc = OPTCOLL_Barrier(MPI_COMM_WORLD);
    std::printf("rank %d: %s\n", g_rank, OPTCOLL_Last_error());
    const bool refused = rc != MPI_SUCCESS && error_class(rc) == MPI_ERR_ARG;
    MPI_Finalize();
    return refused ? 0 : 1;
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  // Errors go to the return codes in this test (the default would abort the job).
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Datatype mat2 = MPI_DATATYPE_NULL;
  MPI_Type_contiguous(4, MPI_INT, &mat2);
  MPI_Type_commit(&mat2);
  MPI_Op product = MPI_OP_NULL;
  MPI_Op_create(mat2_product, /*commute=*/0, &product);
  for (int round = 0; round < 2; ++round) {  // the second round runs on cached plans
    check_reductions<std::int32_t>(MPI_INT, MPI_SUM, "MPI_INT sum", 1, round);
    check_reductions<std::int64_t>(MPI_LONG_LONG, MPI_MAX, "MPI_LONG_LONG max", 1, round);
    check_reductions<std::uint16_t>(MPI_UNSIGNED_SHORT, MPI_BXOR, "MPI_UNSIGNED_SHORT bxor", 1,
                                    round);
    check_reductions<std::int32_t>(mat2, product, "2x2 matrix product (non-commutative)", 4, round);
    check_rooted_movement(round, packed_displs, "packed");
    check_rooted_movement(round, reversed_displs, "reversed displs");
    check_unrooted_movement(round, packed_displs, "packed");
    check_unrooted_movement(round, reversed_displs, "reversed displs");
  }
  // gatherv/scatterv with the count exchange: under auto at p <= 5 they run linear without
  // it (docs/design.md, Selection), so force a tree to check the exchange path's results too.
  expect(OPTCOLL_Set_algorithm("gatherv", "binomial") == MPI_SUCCESS &&
             OPTCOLL_Set_algorithm("scatterv", "binomial") == MPI_SUCCESS,
         "set gatherv/scatterv binomial");
  check_rooted_movement(3, reversed_displs, "reversed displs, count exchange");
  expect(OPTCOLL_Set_algorithm("gatherv", "auto") == MPI_SUCCESS &&
             OPTCOLL_Set_algorithm("scatterv", "auto") == MPI_SUCCESS,
         "set gatherv/scatterv auto");
  // An explicit algorithm through the settings, then back to auto.
  expect(OPTCOLL_Set_algorithm("allreduce", "ring") == MPI_SUCCESS, "set allreduce ring");
  check_reductions<std::int32_t>(MPI_INT, MPI_SUM, "MPI_INT sum under ring", 1, 3);
  expect(OPTCOLL_Set_algorithm("allreduce", "auto") == MPI_SUCCESS, "set allreduce auto");
  check_errors();
  check_communicator_turnover();
  MPI_Op_free(&product);
  MPI_Type_free(&mat2);
  int failures = 0;
  MPI_Allreduce(&g_failures, &failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (g_rank == 0) {
    std::printf("C API: %d checks per rank on %d ranks, %d failures\n", g_checks, g_size, failures);
  }
  MPI_Finalize();
  return failures == 0 ? 0 : 1;
}
