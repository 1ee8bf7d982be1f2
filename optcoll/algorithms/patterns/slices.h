// SPDX-License-Identifier: Apache-2.0
// File: named slices of a collective's buffers, so algorithm files read like the math.
#pragma once

#include <vector>

#include "optcoll/model/collective.h"
#include "optcoll/schedule/schedule.h"

namespace optcoll::algorithms {

// Rank r's whole input / output buffer.
inline Slice input_of(const Layout& layout, Rank r) {
  return {Buf::kInput, 0, layout.input_count(r)};
}
inline Slice output_of(const Layout& layout, Rank r) {
  return {Buf::kOutput, 0, layout.output_count(r)};
}

// Block of rank `owner` inside a buffer laid out in rank order (gather/allgather outputs,
// scatter and reduce_scatter inputs): [displ(owner), displ(owner) + block(owner)).
inline Slice block_in(const Layout& layout, Buf buf, Rank owner) {
  return {buf, layout.displ(owner), layout.block(owner)};
}

// Same, relative to `base` (a slice of `layout.total()` elements in rank order).
inline Slice block_at(const Layout& layout, const Slice& base, Rank owner) {
  return {base.buf, base.offset + layout.displ(owner), layout.block(owner)};
}

// Every rank's block, in rank order.
inline std::vector<Count> blocks_of(const Layout& layout) {
  std::vector<Count> blocks;
  blocks.reserve(static_cast<std::size_t>(layout.nranks()));
  for (Rank r = 0; r < layout.nranks(); ++r) blocks.push_back(layout.block(r));
  return blocks;
}

// Elements [offset, offset + count) of `base`.
inline Slice sub(const Slice& base, Count offset, Count count) {
  return {base.buf, base.offset + offset, count};
}

}  // namespace optcoll::algorithms
