// SPDX-License-Identifier: Apache-2.0
// File: a naive reference of every collective's MPI semantics on real bytes, written from
// the MPI standard's definitions and independent of any schedule (and of the symbolic
// postconditions in model/collective.cc). `optcoll run` and the demo check results with it.
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

#include "optcoll/exec/reduce_kernels.h"
#include "optcoll/model/collective.h"

namespace optcoll {

using Bytes = std::vector<std::byte>;

// Each rank's output after the collective, given each rank's input (bcast: the root's
// input is the message, the other inputs are ignored). Reductions combine in rank order
// x0 ⊕ x1 ⊕ ... ⊕ x(p-1) (scan: x0 ⊕ ... ⊕ xr on rank r; exscan: x0 ⊕ ... ⊕ x(r-1), and
// nothing on rank 0). `type.bytes` is the element size.
std::vector<Bytes> reference_outputs(const CollectiveSpec& spec, const std::vector<Bytes>& inputs,
                                     const Datatype& type, const ReduceOp& op);

// Deterministic test data for rank r: `count` elements of element_type(scalar, op_name),
// small integer-valued numbers chosen so that every reduction with `op_name` is exact (no
// rounding, no overflow for floats): sum/min/max: (31r + 7i) mod 1000; prod: 1 or 2;
// matmul2: 2x2 matrices with entries 0..3.
Bytes make_input(const Datatype& scalar, std::string_view op_name, Rank r, Count count);

// The 2x2 matrix product over a scalar integer type (elements are row-major matrices of four
// scalars, wrapping arithmetic): a non-commutative operator for testing rank order.
Datatype matrix_2x2_type(const Datatype& scalar);  // throws for float/double
ReduceOp matrix_2x2_product(const Datatype& scalar);

// The element type and operator for the CLI names (--dtype, --op): matmul2 means the 2x2
// matrix product over the given integer scalar type.
Datatype element_type(const Datatype& scalar, std::string_view op_name);
ReduceOp reduce_op(const Datatype& scalar, std::string_view op_name);

}  // namespace optcoll
