// SPDX-License-Identifier: Apache-2.0
// File: naive reference semantics and test data.
#include "optcoll/api/reference.h"

#include <cstring>

#include "optcoll/model/error.h"

namespace optcoll {
namespace {

// Prefix sums of `blocks`.
std::vector<Count> offsets_of(const std::vector<Count>& blocks) {
  std::vector<Count> offsets(blocks.size() + 1, 0);
  for (std::size_t i = 0; i < blocks.size(); ++i) offsets[i + 1] = offsets[i] + blocks[i];
  return offsets;
}

// Elements [first, first+count) of `src`, appended to `dst`.
void append(Bytes& dst, const Bytes& src, Count first, Count count, std::size_t elem) {
  const auto begin =
      src.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(first) * elem);
  dst.insert(dst.end(), begin,
             begin + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(count) * elem));
}

// x0 ⊕ x1 ⊕ ... over elements [first, first+count) of every input (at least one).
Bytes combine_all(const std::vector<Bytes>& inputs, Count first, Count count, const Datatype& type,
                  const ReduceOp& op) {
  Bytes acc;
  append(acc, inputs[0], first, count, type.bytes);
  Bytes next;
  for (std::size_t r = 1; r < inputs.size(); ++r) {
    next.clear();
    append(next, inputs[r], first, count, type.bytes);
    op.combine(acc.data(), next.data(), acc.data(), count);  // acc = acc ⊕ x_r
  }
  return acc;
}

template <typename T>
void put(Bytes& out, std::size_t index, T value) {
  std::memcpy(out.data() + index * sizeof(T), &value, sizeof(T));
}

// Writes the scalar value v at scalar index `index` of `out`, in the representation of
// `scalar`.
void put_scalar(Bytes& out, const Datatype& scalar, std::size_t index, std::int64_t v) {
  switch (scalar.builtin) {
    case BuiltinType::kInt32:
      put(out, index, static_cast<std::int32_t>(v));
      break;
    case BuiltinType::kInt64:
      put(out, index, v);
      break;
    case BuiltinType::kFloat:
      put(out, index, static_cast<float>(v));
      break;
    case BuiltinType::kDouble:
      put(out, index, static_cast<double>(v));
      break;
    case BuiltinType::kUser:
      throw InternalError("put_scalar on a user type");
  }
}

template <typename T>
void matrix_product(const std::byte* left, const std::byte* right, std::byte* out, Count n) {
  using U = std::make_unsigned_t<T>;  // wrapping arithmetic without undefined behaviour
  for (Count e = 0; e < n; ++e) {
    U a[4];
    U b[4];
    std::memcpy(a, left + e * 4 * sizeof(T), sizeof(a));
    std::memcpy(b, right + e * 4 * sizeof(T), sizeof(b));
    const U c[4] = {
        static_cast<U>(a[0] * b[0] + a[1] * b[2]), static_cast<U>(a[0] * b[1] + a[1] * b[3]),
        static_cast<U>(a[2] * b[0] + a[3] * b[2]), static_cast<U>(a[2] * b[1] + a[3] * b[3])};
    std::memcpy(out + e * 4 * sizeof(T), c, sizeof(c));
  }
}

}  // namespace

std::vector<Bytes> reference_outputs(const CollectiveSpec& spec, const std::vector<Bytes>& inputs,
                                     const Datatype& type, const ReduceOp& op) {
  validate(spec);
  const auto p = static_cast<std::size_t>(spec.nranks);
  OPTCOLL_CHECK(inputs.size() == p, "reference needs {} inputs, got {}", p, inputs.size());
  const std::size_t elem = type.bytes;
  const auto root = static_cast<std::size_t>(spec.root);
  std::vector<Bytes> out(p);
  // Per-rank blocks for the block-structured kinds.
  std::vector<Count> blocks = spec.counts;
  if (blocks.empty()) blocks.assign(p, spec.count);
  switch (spec.kind) {
    case CollectiveKind::kBarrier:
      break;
    case CollectiveKind::kBcast:
      for (auto& o : out) o = inputs[root];
      break;
    case CollectiveKind::kReduce:
      out[root] = combine_all(inputs, 0, spec.count, type, op);
      break;
    case CollectiveKind::kAllreduce: {
      const Bytes all = combine_all(inputs, 0, spec.count, type, op);
      for (auto& o : out) o = all;
      break;
    }
    case CollectiveKind::kScan:
    case CollectiveKind::kExscan: {
      // Rank r: x0 ⊕ ... ⊕ xr (scan) or x0 ⊕ ... ⊕ x(r-1) (exscan; rank 0 gets nothing).
      const bool inclusive = spec.kind == CollectiveKind::kScan;
      for (std::size_t r = inclusive ? 0 : 1; r < p; ++r) {
        const std::vector<Bytes> prefix(
            inputs.begin(), inputs.begin() + static_cast<std::ptrdiff_t>(inclusive ? r + 1 : r));
        out[r] = combine_all(prefix, 0, spec.count, type, op);
      }
      break;
    }
    case CollectiveKind::kScatter:
    case CollectiveKind::kScatterv: {
      const auto offsets = offsets_of(blocks);
      for (std::size_t r = 0; r < p; ++r) append(out[r], inputs[root], offsets[r], blocks[r], elem);
      break;
    }
    case CollectiveKind::kGather:
    case CollectiveKind::kGatherv:
    case CollectiveKind::kAllgather:
    case CollectiveKind::kAllgatherv: {
      Bytes all;
      for (std::size_t q = 0; q < p; ++q) append(all, inputs[q], 0, blocks[q], elem);
      const bool everyone =
          spec.kind == CollectiveKind::kAllgather || spec.kind == CollectiveKind::kAllgatherv;
      for (std::size_t r = 0; r < p; ++r) {
        if (everyone || r == root) out[r] = all;
      }
      break;
    }
    case CollectiveKind::kReduceScatter:
    case CollectiveKind::kReduceScatterBlock: {
      const auto offsets = offsets_of(blocks);
      for (std::size_t r = 0; r < p; ++r)
        out[r] = combine_all(inputs, offsets[r], blocks[r], type, op);
      break;
    }
    case CollectiveKind::kAlltoall:
    case CollectiveKind::kAlltoallv: {
      // sent(i, j): elements rank i sends to rank j.
      auto sent = [&](std::size_t i, std::size_t j) {
        return spec.counts.empty()
                   ? spec.count
                   : alltoallv_pair(spec, static_cast<Rank>(i), static_cast<Rank>(j));
      };
      for (std::size_t j = 0; j < p; ++j) {
        for (std::size_t i = 0; i < p; ++i) {
          Count first = 0;
          for (std::size_t k = 0; k < j; ++k) first += sent(i, k);
          append(out[j], inputs[i], first, sent(i, j), elem);
        }
      }
      break;
    }
  }
  return out;
}

Bytes make_input(const Datatype& scalar, std::string_view op_name, Rank r, Count count) {
  const Datatype type = element_type(scalar, op_name);
  Bytes bytes(static_cast<std::size_t>(count) * type.bytes);
  if (op_name == "matmul2") {
    for (std::size_t s = 0; s < static_cast<std::size_t>(count) * 4; ++s) {
      put_scalar(bytes, scalar, s,
                 static_cast<std::int64_t>((static_cast<std::size_t>(r) * 5 + s * 3) % 4));
    }
    return bytes;
  }
  for (Count i = 0; i < count; ++i) {
    const std::int64_t v =
        op_name == "prod" ? 1 + (r + i) % 2 : (31 * std::int64_t{r} + 7 * i) % 1000;
    put_scalar(bytes, scalar, static_cast<std::size_t>(i), v);
  }
  return bytes;
}

Datatype matrix_2x2_type(const Datatype& scalar) {
  if (scalar.builtin != BuiltinType::kInt32 && scalar.builtin != BuiltinType::kInt64) {
    throw_invalid(
        "matmul2 needs an integer type (int32 or int64): floating-point products are "
        "not associative, got {}",
        scalar.name);
  }
  return Datatype::user("mat2x2_" + scalar.name, 4 * scalar.bytes);
}

ReduceOp matrix_2x2_product(const Datatype& scalar) {
  matrix_2x2_type(scalar);  // validates
  if (scalar.builtin == BuiltinType::kInt32) {
    return ReduceOp::user("matmul2", false, matrix_product<std::int32_t>);
  }
  return ReduceOp::user("matmul2", false, matrix_product<std::int64_t>);
}

Datatype element_type(const Datatype& scalar, std::string_view op_name) {
  return op_name == "matmul2" ? matrix_2x2_type(scalar) : scalar;
}

ReduceOp reduce_op(const Datatype& scalar, std::string_view op_name) {
  return op_name == "matmul2" ? matrix_2x2_product(scalar) : ReduceOp::builtin(op_name, scalar);
}

}  // namespace optcoll
