// SPDX-License-Identifier: Apache-2.0
// File: MPI datatypes and operators as optcoll element types and reduction operators.
//
// Data movement sees bytes: any contiguous MPI datatype (lower bound 0, extent equal to its
// size) is its size in bytes. Reductions see elements: MPI_INT, MPI_INT32_T, MPI_LONG,
// MPI_LONG_LONG, MPI_INT64_T, MPI_FLOAT and MPI_DOUBLE with MPI_SUM, MPI_PROD, MPI_MIN and
// MPI_MAX map to optcoll's kernels; every other (datatype, operator) pair, user operators
// included, reduces through MPI_Reduce_local, which computes exactly what MPI's own
// collectives compute, with MPI_Op_commutative deciding whether rank order must be kept.
#pragma once

#include <cstddef>
#include <string>

#include <mpi.h>

#include "optcoll/exec/reduce_kernels.h"

namespace optcoll::capi {

// "MPI_INT", or "a derived datatype": for messages.
std::string datatype_name(MPI_Datatype type);

// Size in bytes of one element of a contiguous datatype. CallError(MPI_ERR_TYPE) for
// MPI_DATATYPE_NULL, an uncommitted or non-contiguous type; `role` names the argument.
std::size_t contiguous_bytes(MPI_Datatype type, const char* role);

// The element type optcoll reduces over: a built-in for the kernels above, else a user
// type of the datatype's size. The two-argument form copies nothing for a built-in (a
// reference to a table made once) and fills in and returns `user` otherwise: a small call
// spent about 100 instructions copying the type.
Datatype element_type(MPI_Datatype type);
const Datatype& element_type(MPI_Datatype type, Datatype& user);

// The reduction: optcoll's kernel where one exists, else MPI_Reduce_local. CallError
// (MPI_ERR_OP) for MPI_OP_NULL. The form with `user` returns the kernel's table entry
// itself (copying its name and function cost a small call about 180 instructions), or
// fills in and returns `user` for MPI_Reduce_local.
ReduceOp reduce_op(MPI_Op op, MPI_Datatype type, const Datatype& element);
const ReduceOp& reduce_op(MPI_Op op, MPI_Datatype type, const Datatype& element, ReduceOp& user);

// The plain byte type for data movement.
const Datatype& byte_type();

}  // namespace optcoll::capi
