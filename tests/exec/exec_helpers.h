// SPDX-License-Identifier: Apache-2.0
// File: helpers shared by the executor tests: run a schedule on a thread world with given
// contributions, operators for the tests, and readable comparisons of byte buffers.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "optcoll/exec/executor.h"
#include "optcoll/exec/reduce_kernels.h"
#include "optcoll/exec/threads/world.h"
#include "optcoll/model/collective.h"
#include "tests/testing/reference.h"

namespace optcoll::testing {

// Garbage that output buffers start with, so that an element nobody writes shows.
inline constexpr std::byte kPoison{0xCD};

// Binds contributions as the schedule expects them (inputs; bcast: the root's output) and
// runs the schedule on `world`; returns every rank's output buffer. Throws like
// ThreadWorld::run.
inline std::vector<Bytes> run_schedule(ThreadWorld& world, const Schedule& schedule,
                                       const Datatype& type, const ReduceOp& op,
                                       const std::vector<Bytes>& contributions,
                                       const ExecOptions& options = {}) {
  const Layout layout(schedule.spec);
  const Rank p = schedule.spec.nranks;
  std::vector<Bytes> outputs(static_cast<std::size_t>(p));
  std::vector<Bytes> inputs(static_cast<std::size_t>(p));
  for (Rank r = 0; r < p; ++r) {
    const auto i = static_cast<std::size_t>(r);
    outputs[i].assign(static_cast<std::size_t>(layout.output_count(r)) * type.bytes, kPoison);
    if (schedule.spec.kind == CollectiveKind::kBcast) {
      if (r == schedule.spec.root) outputs[i] = contributions[i];
    } else {
      inputs[i] = contributions[i];
    }
  }
  world.run([&](Transport& transport) {
    const auto me = static_cast<std::size_t>(transport.rank());
    execute(schedule, transport, {inputs[me], outputs[me]}, type, op, options);
  });
  return outputs;
}

// "" when equal; otherwise the first differing element, expected vs actual, in hex.
inline std::string first_difference(const Bytes& actual, const Bytes& expected,
                                    std::size_t elem_bytes) {
  if (actual.size() != expected.size()) {
    return fmt::format("size {} bytes, expected {}", actual.size(), expected.size());
  }
  for (std::size_t i = 0; i < actual.size(); i += elem_bytes) {
    if (std::memcmp(actual.data() + i, expected.data() + i, elem_bytes) != 0) {
      std::string a;
      std::string e;
      for (std::size_t k = 0; k < elem_bytes; ++k) {
        a += fmt::format("{:02x}", static_cast<unsigned>(actual[i + k]));
        e += fmt::format("{:02x}", static_cast<unsigned>(expected[i + k]));
      }
      return fmt::format("element {}: got {} expected {}", i / elem_bytes, a, e);
    }
  }
  return "";
}

// As first_difference for floating-point elements of type T, with a relative tolerance.
template <typename T>
std::string first_difference_near(const Bytes& actual, const Bytes& expected, double tolerance) {
  if (actual.size() != expected.size()) {
    return fmt::format("size {} bytes, expected {}", actual.size(), expected.size());
  }
  for (std::size_t i = 0; i < actual.size(); i += sizeof(T)) {
    const double a = load<T>(actual.data() + i);
    const double e = load<T>(expected.data() + i);
    if (!(std::fabs(a - e) <= tolerance * std::max(1.0, std::fabs(e)))) {
      return fmt::format("element {}: got {} expected {}", i / sizeof(T), a, e);
    }
  }
  return "";
}

// The non-commutative test operator: products of 2x2 int64 matrices (wrapping).
inline Datatype mat2_type() { return Datatype::user("mat2x2_i64", kMat2Bytes); }
inline ReduceOp mat2_product() {
  return ReduceOp::user("mat2x2_product", false,
                        [](const std::byte* left, const std::byte* right, std::byte* out, Count n) {
                          for (Count i = 0; i < n; ++i) {
                            const auto at = static_cast<std::size_t>(i) * kMat2Bytes;
                            // Reads both operands before writing: `out` may alias either.
                            mat2_multiply(left + at, right + at, out + at);
                          }
                        });
}

// One world per size (and way of running its ranks: auto chooses fibers when they outnumber
// the CPUs), reused by every test of the process (which also checks that a world runs many
// collectives, failed or not, one after another).
inline ThreadWorld& shared_world(Rank p, RankExecution execution = RankExecution::kAuto) {
  static std::map<std::pair<Rank, RankExecution>, std::unique_ptr<ThreadWorld>> worlds;
  auto& world = worlds[{p, execution}];
  if (!world) {
    world = std::make_unique<ThreadWorld>(p, WorldOptions{std::chrono::seconds(60), execution});
  }
  return *world;
}

// A Transport that passes every call on to another (the thread transport, say), for tests
// that change one behaviour by overriding it. It does not override irecv_reduce(): its
// receive-reduces use Transport's default (staged) one.
class ForwardingTransport : public Transport {
 public:
  explicit ForwardingTransport(Transport& inner) : inner_(inner) {}
  Rank rank() const override { return inner_.rank(); }
  Rank size() const override { return inner_.size(); }
  RequestId isend(Rank to, MsgKey key, std::span<const std::byte> data) override {
    return inner_.isend(to, key, data);
  }
  RequestId irecv(Rank from, MsgKey key, std::span<std::byte> data) override {
    return inner_.irecv(from, key, data);
  }
  void abort(const std::string& reason) override { inner_.abort(reason); }
  void attach(Progress& progress) override { inner_.attach(progress); }
  void detach() override { inner_.detach(); }

 protected:
  void do_wait_some(std::chrono::milliseconds timeout, std::vector<RequestId>& done) override {
    inner_.wait_some(timeout, done);
  }
  void do_cancel(std::span<const RequestId> ids) override { inner_.cancel(ids); }

 private:
  Transport& inner_;
};

// True if `text` contains `part`; for EXPECT_TRUE with the text as message.
inline bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace optcoll::testing
