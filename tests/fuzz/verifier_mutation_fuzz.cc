// SPDX-License-Identifier: Apache-2.0
// File: libFuzzer target for the verifier. The input picks a registry schedule (algorithm,
// rank count, counts, commutativity) and a list of mutations (drop an op, shift or resize a
// slice, retarget a message, flip an operand side, drop or add a dependency, change a seq).
// The mutated schedule must be rejected by the verifier, or verify clean and then produce,
// on threads with real data, exactly the naive reference's result. Never a crash, never a
// wrong answer that the verifier accepted.
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "optcoll/algorithms/registry.h"
#include "optcoll/api/reference.h"
#include "optcoll/exec/executor.h"
#include "optcoll/exec/threads/world.h"
#include "optcoll/model/error.h"
#include "optcoll/verify/verify.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/testing/registry_cases.h"

namespace {

using namespace optcoll;

class Input {
 public:
  Input(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}
  bool empty() const { return pos_ >= size_; }
  std::uint32_t next(std::uint32_t bound) {  // a value in [0, bound)
    std::uint32_t v = 0;
    for (int i = 0; i < 2 && pos_ < size_; ++i) v = (v << 8) | data_[pos_++];
    return bound == 0 ? 0 : v % bound;
  }

 private:
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t pos_ = 0;
};

// One of the op's slices (a slice list's entry `pick`, modulo its length), or null for an
// empty list.
Slice* slice_of(Action& action, bool destination, std::uint32_t pick) {
  const auto entry = [pick](std::vector<Slice>& list) -> Slice* {
    return list.empty() ? nullptr : &list[pick % list.size()];
  };
  return std::visit(
      [&](auto& a) -> Slice* {
        using A = std::decay_t<decltype(a)>;
        if constexpr (std::is_same_v<A, Send>)
          return &a.src;
        else if constexpr (std::is_same_v<A, Recv> || std::is_same_v<A, RecvReduce>)
          return &a.dst;
        else if constexpr (std::is_same_v<A, SendSlices>)
          return entry(a.src);
        else if constexpr (std::is_same_v<A, RecvSlices>)
          return entry(a.dst);
        else
          return destination ? &a.dst : &a.src;
      },
      action);
}

void mutate(Schedule& s, Input& in) {
  const auto p = static_cast<std::uint32_t>(s.ranks.size());
  auto& program = s.ranks[in.next(p)];
  if (program.ops.empty()) return;
  const std::uint32_t index = in.next(static_cast<std::uint32_t>(program.ops.size()));
  Op& op = program.ops[index];
  switch (in.next(8)) {
    case 0:
      program.ops.erase(program.ops.begin() + index);
      break;
    case 1:
      if (Slice* slice = slice_of(op.action, in.next(2) == 1, in.next(4))) {
        slice->offset += 1 + in.next(3);
      }
      break;
    case 2:
      if (Slice* slice = slice_of(op.action, in.next(2) == 1, in.next(4))) {
        slice->count += in.next(5) - 2;
      }
      break;
    case 3:
      std::visit(
          [&](auto& a) {
            if constexpr (requires { a.peer; }) a.peer = static_cast<Rank>(in.next(p));
          },
          op.action);
      break;
    case 4:
      if (auto* rr = std::get_if<RecvReduce>(&op.action))
        rr->incoming = rr->incoming == Side::kLeft ? Side::kRight : Side::kLeft;
      if (auto* r = std::get_if<Reduce>(&op.action))
        r->src_side = r->src_side == Side::kLeft ? Side::kRight : Side::kLeft;
      break;
    case 5:
      if (!op.after.empty())
        op.after.erase(op.after.begin() + in.next(static_cast<std::uint32_t>(op.after.size())));
      break;
    case 6:
      if (index > 0) {
        op.after.push_back(static_cast<OpId>(in.next(index)));
        std::sort(op.after.begin(), op.after.end());
        op.after.erase(std::unique(op.after.begin(), op.after.end()), op.after.end());
      }
      break;
    default:
      if (op.seq >= 0) op.seq = static_cast<std::int32_t>(in.next(4));
      break;
  }
}

// Runs a verified schedule on threads with real data and compares with the reference.
void check_execution(const Schedule& s) {
  static std::map<Rank, std::unique_ptr<ThreadWorld>> worlds;
  const Rank p = s.spec.nranks;
  auto& world = worlds[p];
  if (!world)
    world = std::make_unique<ThreadWorld>(p, WorldOptions{std::chrono::milliseconds(20000)});
  const Datatype scalar = Datatype::int64();
  const std::string op_name = s.spec.commutative ? "sum" : "matmul2";
  const Datatype type = element_type(scalar, op_name);
  const ReduceOp op = reduce_op(scalar, op_name);
  Schedule run = s;
  run.spec.elem_bytes = type.bytes;
  const Layout layout(run.spec);
  const bool bcast = run.spec.kind == CollectiveKind::kBcast;
  std::vector<Bytes> inputs(static_cast<std::size_t>(p));
  std::vector<Bytes> outputs(static_cast<std::size_t>(p));
  for (Rank r = 0; r < p; ++r) {
    const auto i = static_cast<std::size_t>(r);
    inputs[i] =
        make_input(scalar, op_name, r,
                   bcast ? (r == layout.root() ? layout.total() : 0) : layout.input_count(r));
    outputs[i].assign(static_cast<std::size_t>(layout.output_count(r)) * type.bytes,
                      std::byte{0x5A});
  }
  if (bcast)
    outputs[static_cast<std::size_t>(layout.root())] =
        inputs[static_cast<std::size_t>(layout.root())];
  world->run([&](Transport& t) {
    const auto me = static_cast<std::size_t>(t.rank());
    const std::span<const std::byte> in =
        bcast ? std::span<const std::byte>{} : std::span<const std::byte>(inputs[me]);
    execute(run, t, {in, outputs[me]}, type, op);
  });
  fuzz::require(reference_outputs(run.spec, inputs, type, op) == outputs);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Input in(data, size);
  static const auto cases = optcoll::testing::registry_cases({1, 2, 3, 4, 5, 7, 8});
  const auto& c = cases[in.next(static_cast<std::uint32_t>(cases.size()))];
  Schedule s = algorithms::build(*c.algorithm, c.spec);
  const std::uint32_t mutations = in.next(4);
  for (std::uint32_t i = 0; i < mutations && !in.empty(); ++i) mutate(s, in);
  const VerifyReport report = verify(s);  // must not throw, whatever the damage
  if (report.ok()) check_execution(s);
  return 0;
}
