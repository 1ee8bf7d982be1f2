// SPDX-License-Identifier: Apache-2.0
// File: MPI datatypes and operators as optcoll element types and reduction operators.
#include "optcoll/capi/mpi_types.h"

#include <algorithm>
#include <cstring>
#include <span>
#include <vector>

#include "optcoll/capi/call_error.h"

namespace optcoll::capi {
namespace {

bool is_one_of(MPI_Datatype type, std::initializer_list<MPI_Datatype> types) {
  for (const MPI_Datatype t : types) {
    if (type == t) return true;
  }
  return false;
}

const char* builtin_op_name(MPI_Op op) {
  if (op == MPI_SUM) return "sum";
  if (op == MPI_PROD) return "prod";
  if (op == MPI_MIN) return "min";
  if (op == MPI_MAX) return "max";
  return nullptr;
}

// out = left (op) right through MPI_Reduce_local(in, inout), which computes inout = in op
// inout: the right operand is staged in `out` (or a scratch copy when out aliases left).
CombineFn reduce_local(MPI_Op op, MPI_Datatype type, std::size_t bytes) {
  return [op, type, bytes](const std::byte* left, const std::byte* right, std::byte* out, Count n) {
    if (n == 0) return;
    const std::size_t total = static_cast<std::size_t>(n) * bytes;
    thread_local std::vector<std::byte> scratch;
    std::byte* inout = out;
    if (out == left && left != right) {
      scratch.resize(total);
      inout = scratch.data();
    }
    if (inout != right) std::memcpy(inout, right, total);
    // Counts past INT_MAX go in pieces; each element is combined independently.
    constexpr Count kPiece = 1 << 30;
    for (Count done = 0; done < n; done += kPiece) {
      const Count now = std::min(kPiece, n - done);
      const std::size_t offset = static_cast<std::size_t>(done) * bytes;
      const int rc =
          MPI_Reduce_local(left + offset, inout + offset, static_cast<int>(now), type, op);
      if (rc != MPI_SUCCESS) {
        throw Error(
            ErrorCode::kInvalidArgument,
            fmt::format("MPI_Reduce_local failed (MPI error {}) for {}", rc, datatype_name(type)));
      }
    }
    if (inout != out) std::memcpy(out, inout, total);
  };
}

}  // namespace

std::string datatype_name(MPI_Datatype type) {
  if (type == MPI_DATATYPE_NULL) return "MPI_DATATYPE_NULL";
  char name[MPI_MAX_OBJECT_NAME] = {};
  int length = 0;
  if (MPI_Type_get_name(type, name, &length) == MPI_SUCCESS && length > 0) {
    return std::string(name, static_cast<std::size_t>(length));
  }
  return "a derived datatype";
}

namespace {

// The size of a predefined basic datatype, checked (below) on its first use and then kept:
// their handles never change while MPI runs, and asking MPI three questions per argument
// cost a small call about 10% (bench_mpi_call). Derived types are checked on every call:
// a freed type's handle may come back as another type.
struct KnownType {
  MPI_Datatype type;
  std::size_t bytes = 0;  // 0: not checked yet
};

std::span<KnownType> known_types() {
  // Looked up in this order: the most used first (a scan to MPI_DOUBLE, 14th, cost a small
  // call about 50 instructions).
  static KnownType known[] = {
      {MPI_DOUBLE},        {MPI_INT},           {MPI_BYTE},
      {MPI_FLOAT},         {MPI_LONG},          {MPI_CHAR},
      {MPI_LONG_LONG},     {MPI_INT64_T},       {MPI_INT32_T},
      {MPI_UNSIGNED},      {MPI_UNSIGNED_LONG}, {MPI_UNSIGNED_LONG_LONG},
      {MPI_UINT64_T},      {MPI_UINT32_T},      {MPI_SIGNED_CHAR},
      {MPI_UNSIGNED_CHAR}, {MPI_SHORT},         {MPI_UNSIGNED_SHORT},
      {MPI_INT8_T},        {MPI_INT16_T},       {MPI_UINT8_T},
      {MPI_UINT16_T},      {MPI_C_BOOL},        {MPI_WCHAR},
  };
  return known;
}

std::size_t checked_contiguous_bytes(MPI_Datatype type, const char* role);

}  // namespace

std::size_t contiguous_bytes(MPI_Datatype type, const char* role) {
  for (KnownType& known : known_types()) {
    if (known.type != type) continue;
    if (known.bytes == 0) known.bytes = checked_contiguous_bytes(type, role);
    return known.bytes;
  }
  return checked_contiguous_bytes(type, role);
}

namespace {

std::size_t checked_contiguous_bytes(MPI_Datatype type, const char* role) {
  if (type == MPI_DATATYPE_NULL) throw_call(MPI_ERR_TYPE, "{} is MPI_DATATYPE_NULL", role);
  int size = 0;
  MPI_Aint lb = 0;
  MPI_Aint extent = 0;
  MPI_Aint true_lb = 0;
  MPI_Aint true_extent = 0;
  if (MPI_Type_size(type, &size) != MPI_SUCCESS ||
      MPI_Type_get_extent(type, &lb, &extent) != MPI_SUCCESS ||
      MPI_Type_get_true_extent(type, &true_lb, &true_extent) != MPI_SUCCESS) {
    throw_call(MPI_ERR_TYPE, "{} is not a valid datatype", role);
  }
  if (lb != 0 || true_lb != 0 || extent != size || true_extent != size) {
    throw_call(MPI_ERR_TYPE,
               "{} ({}) is not contiguous (size {}, lower bound {}, extent {}); optcoll's C API "
               "moves contiguous datatypes only",
               role, datatype_name(type), size, lb, extent);
  }
  return static_cast<std::size_t>(size);
}

}  // namespace

const Datatype& element_type(MPI_Datatype type, Datatype& user) {
  static const Datatype int32 = Datatype::int32();
  static const Datatype int64 = Datatype::int64();
  static const Datatype float32 = Datatype::float32();
  static const Datatype float64 = Datatype::float64();
  const std::size_t bytes = contiguous_bytes(type, "datatype");
  if (bytes == 0) throw_call(MPI_ERR_TYPE, "datatype {} has size 0", datatype_name(type));
  if (type == MPI_DOUBLE) return float64;
  if (bytes == 4 && is_one_of(type, {MPI_INT, MPI_INT32_T})) return int32;
  if (bytes == 8 && is_one_of(type, {MPI_LONG, MPI_LONG_LONG, MPI_INT64_T})) return int64;
  if (type == MPI_FLOAT) return float32;
  user = Datatype::user(datatype_name(type), bytes);
  return user;
}

Datatype element_type(MPI_Datatype type) {
  Datatype user;
  return element_type(type, user);
}

const ReduceOp& reduce_op(MPI_Op op, MPI_Datatype type, const Datatype& element, ReduceOp& user) {
  if (op == MPI_OP_NULL) throw_call(MPI_ERR_OP, "the operator is MPI_OP_NULL");
  const char* builtin = builtin_op_name(op);
  if (builtin != nullptr && element.builtin != BuiltinType::kUser) {
    return ReduceOp::builtin(builtin, element);
  }
  int commute = 1;
  if (MPI_Op_commutative(op, &commute) != MPI_SUCCESS) {
    throw_call(MPI_ERR_OP, "the operator is not a valid MPI_Op");
  }
  user = ReduceOp::user(builtin != nullptr ? builtin : "user MPI_Op", commute != 0,
                        reduce_local(op, type, element.bytes));
  return user;
}

ReduceOp reduce_op(MPI_Op op, MPI_Datatype type, const Datatype& element) {
  ReduceOp user;
  return reduce_op(op, type, element, user);
}

const Datatype& byte_type() {
  static const Datatype bytes = Datatype::user("byte", 1);
  return bytes;
}

}  // namespace optcoll::capi
