// SPDX-License-Identifier: Apache-2.0
// File: the MPI transport (mpi_transport.h).
#include "optcoll/exec/mpi/mpi_transport.h"

#include <algorithm>
#include <charconv>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string_view>
#include <thread>

#include <fmt/format.h>

#include "optcoll/model/error.h"

namespace optcoll::mpi {
namespace {

constexpr int kNoticeTag = 1;
constexpr int kMaxNoticeBytes = 4096;
constexpr int kSeqBits = 16;  // with calls: the low bits of a tag are the seq
// A same-node sender copies at most this much into its block per progress step, so that
// the receiver starts early and several transfers advance together.
// Which node each rank of `comm` is on (MPI_Comm_split_type SHARED): node ids numbered by
// each node's lowest rank. Every rank computes the same placement (an allgather). PMPI_: the
// PMPI library interposes the collectives and runs them through optcoll.
void check_mpi(int code, const char* call);

Placement discover_placement(MPI_Comm comm) {
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  int lowest = rank;
  MPI_Comm node = MPI_COMM_NULL;
  if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) == MPI_SUCCESS) {
    PMPI_Allreduce(&rank, &lowest, 1, MPI_INT, MPI_MIN, node);
    MPI_Comm_free(&node);
  }
  std::vector<int> lowest_of(static_cast<std::size_t>(size));
  check_mpi(PMPI_Allgather(&lowest, 1, MPI_INT, lowest_of.data(), 1, MPI_INT, comm),
            "PMPI_Allgather");
  Placement placement;
  std::vector<std::int32_t> id_of_lowest(static_cast<std::size_t>(size), -1);
  std::int32_t nodes = 0;
  for (const int l : lowest_of) {
    auto& id = id_of_lowest[static_cast<std::size_t>(l)];
    if (id < 0) id = nodes++;
    placement.node_of.push_back(id);
  }
  return placement;
}

// The node's online CPUs (not this rank's affinity: mpirun binds each rank to one core).
int cpus_of_this_node() {
  const unsigned cpus = std::thread::hardware_concurrency();
  return cpus == 0 ? 1 : static_cast<int>(cpus);
}

// About a microsecond of pause instructions between two polls of a waiting rank that keeps
// its CPU: the polled cache lines stay with the peer writing them (a tight poll of a block
// being filled slows its writer), and the rank keeps its time slice (a yield gives it away).
void relax_between_polls() {
  for (int i = 0; i < 32; ++i) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
  }
}

// A send of at most this many bytes is tested as soon as it is posted: Open MPI (4.1, the
// same-node vader transport) sends up to 256 bytes inline, complete when MPI_Isend returns
// (measured: every send of 8 or 256 bytes, none of 257 B to 64 KiB even after MPI_Test's
// progress call). Each such send then costs its MPI_Test (about 50 instructions) instead of
// a place in every poll's MPI_Testsome until one reports it, often a poll of its own.
constexpr std::size_t kSentAtOnceBytes = 256;

constexpr std::size_t kChunkBytes = std::size_t{64} << 10;
constexpr int kChunksPerPoll = 8;  // copy rounds between two MPI polls
// (Measured, p = 2 ping-pong of 2 MiB: chunks of 64 KiB 145-180 us, 256 KiB 215-280 us,
// 1 MiB 230-330 us: small chunks let the receiver follow closely.)
// A receive waiting this long looks for its message on the other protocol's communicator.
constexpr auto kMismatchProbeAfter = std::chrono::milliseconds{5};
// ... and concludes only when it finds it at this many consecutive probes, with at least
// kMismatchPolls polls of its requests since the first (probe_mismatches).
constexpr int kMismatchProbes = 3;
constexpr std::uint64_t kMismatchPolls = 8;

std::string mpi_error_text(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  return std::string(text, static_cast<std::size_t>(length));
}

void check_mpi(int code, const char* call) {
  if (code != MPI_SUCCESS) {
    throw TransportError(fmt::format("{} failed: {}", call, mpi_error_text(code)));
  }
}

// A byte count with an optional K, M or G suffix (binary); throws naming `variable`.
std::size_t parse_bytes(std::string_view text, const char* variable) {
  std::uint64_t value = 0;
  const char* begin = text.data();
  const char* end = text.data() + text.size();
  const auto [rest, error] = std::from_chars(begin, end, value);
  std::uint64_t scale = 1;
  const std::string_view suffix(rest, static_cast<std::size_t>(end - rest));
  if (suffix == "K" || suffix == "k") scale = std::uint64_t{1} << 10;
  if (suffix == "M" || suffix == "m") scale = std::uint64_t{1} << 20;
  if (suffix == "G" || suffix == "g") scale = std::uint64_t{1} << 30;
  const bool suffix_ok = suffix.empty() || scale != 1;
  if (error != std::errc() || rest == begin || !suffix_ok || value > (UINT64_MAX >> 30)) {
    throw_invalid("{} must be a byte count (digits, optionally K, M or G), got '{}'", variable,
                  text);
  }
  return static_cast<std::size_t>(value * scale);
}

}  // namespace

void MpiTransport::Options::apply(std::string_view variable, std::string_view text) {
  if (variable == "OPTCOLL_SHM") {
    if (text != "0" && text != "1") throw_invalid("OPTCOLL_SHM must be 0 or 1, got '{}'", text);
    shared_memory = text == "1";
  } else if (variable == "OPTCOLL_SHM_BYTES") {
    const std::size_t bytes = parse_bytes(text, "OPTCOLL_SHM_BYTES");
    if (bytes == 0)
      throw_invalid("OPTCOLL_SHM_BYTES must be positive (OPTCOLL_SHM=0 turns the channel off)");
    shm_bytes = bytes;
  } else if (variable == "OPTCOLL_SHM_MIN_BYTES") {
    shm_min_bytes = parse_bytes(text, "OPTCOLL_SHM_MIN_BYTES");
  } else {
    OPTCOLL_CHECK(false, "{} is not a setting of the same-node channel", variable);
  }
}

MpiTransport::Options MpiTransport::Options::from_environment() {
  Options options;
  for (const char* variable : kVariables) {
    const char* text = std::getenv(variable);
    if (text != nullptr && *text != '\0') options.apply(variable, text);
  }
  return options;
}

MpiTransport::MpiTransport(MPI_Comm comm) : MpiTransport(comm, Options{}, true) {}

MpiTransport::MpiTransport(MPI_Comm comm, Options options) : MpiTransport(comm, options, false) {}

MpiTransport::MpiTransport(MPI_Comm comm, Options options, bool from_environment) {
  check_mpi(MPI_Comm_dup(comm, &data_), "MPI_Comm_dup");
  MPI_Comm_set_errhandler(data_, MPI_ERRORS_RETURN);
  // Agree on the same-node channel (a malformed setting on any rank fails every rank): on
  // only if every rank wants it, the smallest arena, the largest threshold.
  std::string error;
  if (from_environment) {
    try {
      options = Options::from_environment();
    } catch (const Error& e) {
      error = e.what();
    }
  }
  std::uint64_t local[4] = {error.empty() ? 0U : 1U, options.shared_memory ? 0U : 1U,
                            UINT64_MAX - options.shm_bytes, options.shm_min_bytes};
  std::uint64_t agreed[4] = {};
  // PMPI_: the PMPI library (pmpi/) interposes MPI_Allreduce and runs it through optcoll.
  const int code = PMPI_Allreduce(local, agreed, 4, MPI_UINT64_T, MPI_MAX, data_);
  if (code != MPI_SUCCESS || agreed[0] != 0) {
    MPI_Comm_free(&data_);
    if (!error.empty()) throw_invalid("{}", error);
    if (code != MPI_SUCCESS) check_mpi(code, "PMPI_Allreduce");
    throw_invalid("another rank's same-node channel settings (OPTCOLL_SHM*) are malformed");
  }
  check_mpi(MPI_Comm_dup(comm, &control_), "MPI_Comm_dup");
  check_mpi(MPI_Comm_dup(comm, &shm_comm_), "MPI_Comm_dup");
  MPI_Comm_set_errhandler(control_, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(shm_comm_, MPI_ERRORS_RETURN);
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(data_, &rank);
  MPI_Comm_size(data_, &size);
  rank_ = rank;
  size_ = size;
  void* tag_ub = nullptr;
  int found = 0;
  MPI_Comm_get_attr(data_, MPI_TAG_UB, &tag_ub, &found);
  if (found != 0 && tag_ub != nullptr) tag_ub_ = *static_cast<int*>(tag_ub);
  set_call_tags();
  placement_ = discover_placement(data_);
  const std::int32_t my_node = placement_.node_of[static_cast<std::size_t>(rank_)];
  ranks_outnumber_cpus_ = std::count(placement_.node_of.begin(), placement_.node_of.end(),
                                     my_node) > cpus_of_this_node();
  if (agreed[1] == 0) {
    shm_ = ShmArena::create(data_, static_cast<std::size_t>(UINT64_MAX - agreed[2]));
    shm_min_bytes_ = static_cast<std::size_t>(agreed[3]);
    // (Collective: every rank has an arena, or none has.) Not where the node's ranks
    // outnumber its CPUs (the same on every rank of a node): a wait there must give its CPU
    // to the peer it waits for at once, which Open MPI's progress call does in every poll
    // (it yields when idle), and a poll of the rings alone does not (p = 4 and 8 on 2 CPUs,
    // small calls: up to 1.7x the time with rings; docs/design.md, "Small same-node
    // messages").
    if (shm_ != nullptr) {
      const bool rings = options.rings == Options::Rings::kAlways ||
                         (options.rings == Options::Rings::kAuto && !ranks_outnumber_cpus_);
      rings_ = ShmRings::create(*shm_, data_, placement_, rank_, rings);
    }
    ring_seen_.assign(static_cast<std::size_t>(size_), 0);
  }
  notice_in_.resize(kMaxNoticeBytes);
  check_mpi(MPI_Irecv(notice_in_.data(), kMaxNoticeBytes, MPI_CHAR, MPI_ANY_SOURCE, kNoticeTag,
                      control_, &notice_recv_),
            "MPI_Irecv");
}

MpiTransport::~MpiTransport() {
  for (std::size_t i = 0; i < requests_.size(); ++i) {
    if (requests_[i] == MPI_REQUEST_NULL) continue;
    if (pending_[i].receive) MPI_Cancel(&requests_[i]);
    MPI_Request_free(&requests_[i]);
  }
  // Blocks this rank was reading are given back (a failed call may have left some).
  for (const auto& t : transfers_) {
    if (t->receive && t->in_arena) shm_->consume(t->peer, t->block);
  }
  if (notice_recv_ != MPI_REQUEST_NULL) {
    MPI_Cancel(&notice_recv_);
    MPI_Wait(&notice_recv_, MPI_STATUS_IGNORE);
  }
  for (MPI_Request& r : notice_sends_) {
    if (r != MPI_REQUEST_NULL) MPI_Request_free(&r);
  }
  shm_.reset();  // collective over the node
  MPI_Comm_free(&data_);
  MPI_Comm_free(&control_);
  MPI_Comm_free(&shm_comm_);
}

int MpiTransport::checked_tag_for(Rank peer, MsgKey key) const {
  const bool numbered = call_ != 0 || epoch_tags_;
  const int seq_limit = numbered ? (1 << kSeqBits) - 1 : tag_ub_;
  if (key.seq < 0 || key.seq > seq_limit) {
    throw TransportError(
        fmt::format("rank {}: message seq {} to or from rank {} exceeds this MPI's largest tag {}",
                    rank_, key.seq, peer, seq_limit));
  }
  if (!numbered) return key.seq;
  const auto numbers = static_cast<std::uint64_t>(tag_ub_ >> kSeqBits) + 1;  // >= 1
  // Call numbers take the lower half of the numbers, epochs the upper half (never 0, the
  // number of plain tags): a message of a call made before the switch never matches one of
  // an epoch after it.
  const std::uint64_t half = std::max<std::uint64_t>(1, numbers / 2);
  const std::uint64_t number = epoch_tags_ ? half + key.epoch % (numbers - half) : call_ % half;
  return static_cast<int>(number << kSeqBits) + key.seq;
}

void MpiTransport::set_call_tags() {
  call_seq_limit_ = -1;  // epochs: every tag is worked out by checked_tag_for
  if (epoch_tags_) return;
  if (call_ == 0) {
    call_tag_base_ = 0;
    call_seq_limit_ = tag_ub_;
    return;
  }
  // checked_tag_for's number for a call, without its checks, and for the call after the last
  // one without a division (a C API call's tags cost no more than the seq's).
  const auto numbers = static_cast<std::uint64_t>(tag_ub_ >> kSeqBits) + 1;
  const std::uint64_t half = std::max<std::uint64_t>(1, numbers / 2);
  if (call_ == numbered_call_ + 1) {
    call_number_ = call_number_ + 1 == half ? 0 : call_number_ + 1;
  } else {
    call_number_ = call_ % half;
  }
  numbered_call_ = call_;
  call_tag_base_ = static_cast<int>(call_number_ << kSeqBits);
  call_seq_limit_ = (1 << kSeqBits) - 1;
}

void MpiTransport::expect_overlapping_calls() {
  if ((tag_ub_ >> kSeqBits) < 1) {
    throw_invalid(
        "rank {}: this MPI's largest tag {} leaves no room for collectives in flight at once "
        "(nonblocking collectives need at least 2^17 - 1)",
        rank_, tag_ub_);
  }
  epoch_tags_ = true;
  set_call_tags();
}

std::string MpiTransport::why_no_progress_thread() const {
  int level = MPI_THREAD_SINGLE;
  MPI_Query_thread(&level);
  if (level == MPI_THREAD_MULTIPLE) return {};
  return fmt::format(
      "MPI was initialized with thread level {} (MPI_THREAD_SINGLE 0 .. MPI_THREAD_MULTIPLE {}); "
      "a progress thread calls MPI beside the application's thread and needs "
      "MPI_Init_thread(..., MPI_THREAD_MULTIPLE, ...)",
      level, MPI_THREAD_MULTIPLE);
}

void MpiTransport::begin_call(std::uint64_t call) {
  waited_since_.reset();
  // A failed call may have left ring messages behind (others are set aside when a ring
  // fills up, and dropped after the next failure).
  const bool failed_before = !failed_.empty();
  call_ = call;
  set_call_tags();
  failed_.clear();
  failed_by_notice_ = false;
  // Requests a failed call left (cancelled receives, released sends) are gone already;
  // a notice about this call that came early fails it now.
  for (auto it = future_notices_.begin(); it != future_notices_.end();) {
    if (it->first < call_) {
      it = future_notices_.erase(it);
    } else if (it->first == call_) {
      failed_ = it->second;
      failed_by_notice_ = true;
      it = future_notices_.erase(it);
    } else {
      ++it;
    }
  }
  if (failed_before) drop_stale_arrivals();
}

void MpiTransport::throw_unusable() const {
  if (call_ != 0) throw TransportError(failed_);  // this call failed (a notice came early)
  throw TransportError(fmt::format(
      "rank {}: this MPI transport failed earlier ({}); make a new one", rank_, failed_));
}

void MpiTransport::fail(const std::string& message) {
  failed_ = message;
  throw TransportError(message);
}

bool MpiTransport::through_shared_memory(Rank peer, std::size_t bytes) const {
  // The size first: a small message is decided there (shm_min_bytes_ is SIZE_MAX without a
  // channel).
  return bytes >= shm_min_bytes_ && shm_ != nullptr && shm_->on_node(peer);
}

void MpiTransport::check_count(Rank peer, std::size_t bytes) const {
  if (bytes > static_cast<std::size_t>(INT_MAX)) {
    throw TransportError(
        fmt::format("rank {}: a message of {} bytes to or from rank {} exceeds MPI's int count",
                    rank_, bytes, peer));
  }
}

RequestId MpiTransport::post(bool receive, Rank peer, std::int32_t seq, MPI_Comm comm, int tag,
                             void* buffer, std::size_t bytes, Part part, RequestId id) {
  check_count(peer, bytes);
  MPI_Request request = MPI_REQUEST_NULL;
  if (receive) {
    check_mpi(MPI_Irecv(buffer, static_cast<int>(bytes), MPI_BYTE, peer, tag, comm, &request),
              "MPI_Irecv");
  } else {
    check_mpi(MPI_Isend(buffer, static_cast<int>(bytes), MPI_BYTE, peer, tag, comm, &request),
              "MPI_Isend");
  }
  requests_.push_back(request);
  pending_.push_back({id, receive, peer, seq, tag, bytes, part});
  if (!receive && part == Part::kWhole && bytes <= kSentAtOnceBytes) {
    // Most likely complete already: then it is reported by the next wait without an MPI
    // call, and the polls of that wait look at the receives only.
    int flag = 0;
    const int code = MPI_Test(&requests_.back(), &flag, MPI_STATUS_IGNORE);
    if (flag != 0 && code == MPI_SUCCESS) {
      requests_.pop_back();
      pending_.pop_back();
      finished_.push_back(id);
    } else if (code != MPI_SUCCESS) {
      fail(fmt::format("rank {}: the send to rank {} (seq {}) failed: {}", rank_, peer, seq,
                       mpi_error_text(code)));
    }
  }
  return id;
}

RequestId MpiTransport::isend(Rank to, MsgKey key, std::span<const std::byte> data) {
  check_usable();
  const int tag = tag_for(to, key);
  if (through_ring(to, data.size())) return ring_send(to, tag, data);
  // MPI never writes a send buffer (its C signature takes const void* since MPI-3).
  void* buffer =
      const_cast<std::byte*>(data.data());  // NOLINT(cppcoreguidelines-pro-type-const-cast)
  if (!through_shared_memory(to, data.size())) {
    return post(false, to, key.seq, data_, tag, buffer, data.size(), Part::kWhole, next_id_++);
  }
  auto t = std::make_unique<Transfer>();
  t->id = next_id_++;
  t->peer = to;
  t->seq = key.seq;
  t->tag = tag;
  t->bytes = data.size();
  t->src = data;
  t->descriptor = std::make_unique<Descriptor>();
  t->descriptor->bytes = data.size();
  std::optional<std::uint64_t> block;
  if (const Transfer* same = find_send_of(data)) {  // the same bytes to another peer
    block = same->block;
    shm_->share(*block);
  } else {
    block = shm_->allocate(data.size());
  }
  if (block) {
    t->in_arena = true;
    t->block = *block;
    t->descriptor->block = *block;
    t->descriptor->in_arena = 1;
  }
  post(false, to, key.seq, shm_comm_, tag, t->descriptor.get(), sizeof(Descriptor),
       Part::kDescriptor, t->id);
  ++t->mpi_pending;
  if (!t->in_arena) {  // the arena is full: the data follow the descriptor by plain MPI
    post(false, to, key.seq, shm_comm_, tag, buffer, data.size(), Part::kData, t->id);
    ++t->mpi_pending;
  }
  t->described = true;
  if (t->in_arena) copy_in(*t);  // the first chunk at once: the receiver can start
  return start_transfer(std::move(t));
}

RequestId MpiTransport::irecv(Rank from, MsgKey key, std::span<std::byte> data) {
  check_usable();
  const int tag = tag_for(from, key);
  if (through_ring(from, data.size())) return ring_receive(from, key.seq, tag, data);
  if (!through_shared_memory(from, data.size())) {
    return post(true, from, key.seq, data_, tag, data.data(), data.size(), Part::kWhole,
                next_id_++);
  }
  auto t = std::make_unique<Transfer>();
  t->dst = data;
  return receive_descriptor(std::move(t), from, key, tag, data.size());
}

RequestId MpiTransport::irecv_reduce(Rank from, MsgKey key, std::size_t bytes, ReduceInto reduce) {
  check_usable();
  if (!through_shared_memory(from, bytes)) {
    return Transport::irecv_reduce(from, key, bytes, std::move(reduce));
  }
  auto t = std::make_unique<Transfer>();
  t->reduce = std::move(reduce);
  return receive_descriptor(std::move(t), from, key, tag_for(from, key), bytes);
}

namespace {

// The non-empty parts of a vectored message: where each starts (MPI never writes a send
// buffer, so a send's parts are listed writable as MPI's datatype calls want), their sizes
// and their total.
struct NonEmptyParts {
  std::vector<std::byte*> starts;
  std::vector<std::size_t> sizes;
  std::size_t bytes = 0;
};
template <typename Byte>
NonEmptyParts non_empty_parts(std::span<const std::span<Byte>> parts) {
  NonEmptyParts kept;
  for (const auto& part : parts) {
    if (part.empty()) continue;
    kept.starts.push_back(
        const_cast<std::byte*>(part.data()));  // NOLINT(cppcoreguidelines-pro-type-const-cast)
    kept.sizes.push_back(part.size());
    kept.bytes += part.size();
  }
  return kept;
}

}  // namespace

RequestId MpiTransport::isendv(Rank to, MsgKey key,
                               std::span<const std::span<const std::byte>> parts) {
  check_usable();
  const NonEmptyParts kept = non_empty_parts(parts);
  // Same-node messages follow the channel's protocol or the eager rings, each of which moves
  // one span (the arena or ring copy is a copy anyway; the receiver looks for the message
  // there, by its size); a message with at most one part is a plain one.
  if (through_shared_memory(to, kept.bytes) || through_ring(to, kept.bytes)) {
    return Transport::isendv(to, key, parts);
  }
  if (kept.starts.size() <= 1) {
    return isend(to, key,
                 kept.starts.empty() ? std::span<const std::byte>()
                                     : std::span<const std::byte>(kept.starts[0], kept.sizes[0]));
  }
  return post_parts(false, to, key, kept.starts, kept.sizes, kept.bytes);
}

RequestId MpiTransport::irecvv(Rank from, MsgKey key, std::span<const std::span<std::byte>> parts) {
  check_usable();
  const NonEmptyParts kept = non_empty_parts(parts);
  // Same-node: received as irecv_reduce does, whose combine step here copies the parts
  // straight out of the sender's arena block (or, small, staged through the eager ring).
  if (through_shared_memory(from, kept.bytes) || through_ring(from, kept.bytes)) {
    return Transport::irecvv(from, key, parts);
  }
  if (kept.starts.size() <= 1) {
    return irecv(from, key,
                 kept.starts.empty() ? std::span<std::byte>()
                                     : std::span<std::byte>(kept.starts[0], kept.sizes[0]));
  }
  return post_parts(true, from, key, kept.starts, kept.sizes, kept.bytes);
}

RequestId MpiTransport::post_parts(bool receive, Rank peer, MsgKey key,
                                   std::span<std::byte* const> starts,
                                   std::span<const std::size_t> sizes, std::size_t bytes) {
  check_count(peer, bytes);  // also bounds each part: MPI's lengths are ints
  const int tag = tag_for(peer, key);
  std::vector<int> lengths(sizes.size());
  std::vector<MPI_Aint> displacements(sizes.size());
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    lengths[i] = static_cast<int>(sizes[i]);
    check_mpi(MPI_Get_address(starts[i], &displacements[i]), "MPI_Get_address");
  }
  MPI_Datatype type = MPI_DATATYPE_NULL;
  check_mpi(MPI_Type_create_hindexed(static_cast<int>(lengths.size()), lengths.data(),
                                     displacements.data(), MPI_BYTE, &type),
            "MPI_Type_create_hindexed");
  MPI_Request request = MPI_REQUEST_NULL;
  int code = MPI_Type_commit(&type);
  if (code == MPI_SUCCESS) {
    // Absolute addresses: the buffer is MPI_BOTTOM.
    code = receive ? MPI_Irecv(MPI_BOTTOM, 1, type, peer, tag, data_, &request)
                   : MPI_Isend(MPI_BOTTOM, 1, type, peer, tag, data_, &request);
  }
  // Freed now: MPI keeps a datatype that a pending request uses until the request completes
  // (MPI standard, MPI_Type_free), so nothing is left to free after the wait.
  MPI_Type_free(&type);
  check_mpi(code, receive ? "MPI_Irecv (vectored)" : "MPI_Isend (vectored)");
  const RequestId id = next_id_++;
  requests_.push_back(request);
  pending_.push_back({id, receive, peer, key.seq, tag, bytes, Part::kWhole});
  return id;
}

RequestId MpiTransport::ring_send(Rank to, int tag, std::span<const std::byte> data) {
  const RequestId id = next_id_++;
  // After the sends to `to` that wait for room: the ring keeps their order.
  const bool behind = std::any_of(ring_sends_.begin(), ring_sends_.end(),
                                  [to](const RingSend& s) { return s.peer == to; });
  if (!behind && rings_->try_send(to, tag, data)) {
    finished_.push_back(id);
    return id;
  }
  ring_sends_.push_back({id, to, tag, data});
  return id;
}

RequestId MpiTransport::ring_receive(Rank from, std::int32_t seq, int tag,
                                     std::span<std::byte> data) {
  const RequestId id = next_id_++;
  // Behind a receive posted earlier for the same message key: that one gets the older
  // message (as MPI matches).
  const bool behind =
      std::any_of(ring_receives_.begin(), ring_receives_.end(),
                  [&](const RingReceive& r) { return r.peer == from && r.tag == tag; });
  if (!behind) {
    // An arrival is older than anything still in the ring.
    for (std::size_t i = 0; i < arrivals_.size(); ++i) {
      const Arrival& a = arrivals_[i];
      if (a.peer != from || a.tag != tag) continue;
      const std::uint32_t bytes = a.bytes;
      if (bytes == data.size() && bytes > 0) std::memcpy(data.data(), a.data.data(), bytes);
      arrivals_.erase(arrivals_.begin() + static_cast<std::ptrdiff_t>(i));
      if (bytes != data.size()) {
        fail(fmt::format("rank {}: the message from rank {} (seq {}) has {} bytes, expected {}",
                         rank_, from, seq, bytes, data.size()));
      }
      finished_.push_back(id);
      return id;
    }
    // The oldest message in the ring with this key, straight from its slot.
    ShmRings::Message m;
    const std::uint64_t first = rings_->first(from);
    for (std::uint64_t at = first; at < first + ShmRings::kSlots && rings_->peek(from, at, m);
         ++at) {
      if (m.tag != tag || rings_->consumed(from, at)) continue;
      deliver_ring_message(from, at, m, {id, from, tag, seq, data});
      finished_.push_back(id);
      return id;
    }
  }
  ring_receives_.push_back({id, from, tag, seq, data});
  return id;
}

void MpiTransport::deliver_ring_message(Rank peer, std::uint64_t at, const ShmRings::Message& m,
                                        const RingReceive& r) {
  const std::size_t bytes = m.data.size();
  if (bytes == r.dst.size() && bytes > 0) std::memcpy(r.dst.data(), m.data.data(), bytes);
  rings_->consume(peer, at);  // (also when the sizes disagree: the ring goes on)
  if (bytes != r.dst.size()) {
    fail(fmt::format("rank {}: the message from rank {} (seq {}) has {} bytes, expected {}", rank_,
                     peer, r.seq, bytes, r.dst.size()));
  }
}

bool MpiTransport::poll_rings(std::vector<RequestId>& done) {
  bool moved = false;
  ShmRings::Message m;
  for (const Rank peer : rings_->peers()) {
    // Each message is looked at once, when it has arrived: matched to the first receive
    // posted for its key, or left in its slot (a receive posted later looks there).
    std::uint64_t& seen = ring_seen_[static_cast<std::size_t>(peer)];
    seen = std::max(seen, rings_->first(peer));
    while (seen < rings_->first(peer) + ShmRings::kSlots && rings_->peek(peer, seen, m)) {
      const std::uint64_t at = seen++;
      if (rings_->consumed(peer, at)) continue;
      const auto it =
          std::find_if(ring_receives_.begin(), ring_receives_.end(),
                       [&](const RingReceive& r) { return r.peer == peer && r.tag == m.tag; });
      if (it == ring_receives_.end()) continue;
      const RingReceive r = *it;
      ring_receives_.erase(it);
      deliver_ring_message(peer, at, m, r);
      done.push_back(r.id);
      moved = true;
    }
    // A ring full of messages no receive wants yet (a sender far ahead, or a failed call's
    // leftovers): the oldest are set aside, so that the sender can go on.
    while (seen == rings_->first(peer) + ShmRings::kSlots) {
      const std::uint64_t at = rings_->first(peer);
      if (!rings_->peek(peer, at, m)) break;  // (cannot happen: it was seen)
      Arrival& a = arrivals_.emplace_back();
      a.peer = peer;
      a.tag = m.tag;
      a.bytes = static_cast<std::uint32_t>(m.data.size());
      if (!m.data.empty()) std::memcpy(a.data.data(), m.data.data(), m.data.size());
      rings_->consume(peer, at);
      moved = true;
    }
  }
  if (ring_sends_.empty()) return moved;
  // Sends waiting for room, in order; one that still finds its ring full holds back the
  // later ones to the same peer.
  std::vector<Rank>& full = ring_full_;
  full.clear();
  std::size_t kept = 0;
  for (std::size_t i = 0; i < ring_sends_.size(); ++i) {
    const RingSend s = ring_sends_[i];
    const bool blocked = std::find(full.begin(), full.end(), s.peer) != full.end();
    if (!blocked && rings_->try_send(s.peer, s.tag, s.data)) {
      done.push_back(s.id);
      moved = true;
      continue;
    }
    if (!blocked) full.push_back(s.peer);
    ring_sends_[kept++] = s;
  }
  ring_sends_.resize(kept);
  return moved;
}

std::optional<std::uint64_t> MpiTransport::ring_message_size(Rank peer, int tag) const {
  if (rings_ == nullptr || !rings_->to(peer)) return std::nullopt;
  for (const Arrival& a : arrivals_) {
    if (a.peer == peer && a.tag == tag) return a.bytes;
  }
  ShmRings::Message m;
  const std::uint64_t first = rings_->first(peer);
  for (std::uint64_t at = first; at < first + ShmRings::kSlots && rings_->peek(peer, at, m); ++at) {
    if (m.tag == tag && !rings_->consumed(peer, at)) return m.data.size();
  }
  return std::nullopt;
}

void MpiTransport::drop_stale_arrivals() {
  if (rings_ == nullptr || call_ == 0 || epoch_tags_) return;
  // Counted calls: a tag's upper bits are the call number modulo `half` (checked_tag_for).
  // A message of an earlier call (at most half / 2 calls back) is a failed call's leftover;
  // one of this or a later call is a peer's that ran ahead.
  const auto numbers = static_cast<std::uint64_t>(tag_ub_ >> kSeqBits) + 1;
  const std::uint64_t half = std::max<std::uint64_t>(1, numbers / 2);
  const std::uint64_t now = call_ % half;
  const auto stale = [&](int tag) {
    const std::uint64_t behind =
        (now + half - (static_cast<std::uint64_t>(tag) >> kSeqBits)) % half;
    return behind > 0 && behind <= half / 2;
  };
  std::erase_if(arrivals_, [&](const Arrival& a) { return stale(a.tag); });
  // Those still in a ring were looked at (seen) and no receive wanted them.
  ShmRings::Message m;
  for (const Rank peer : rings_->peers()) {
    const std::uint64_t seen = ring_seen_[static_cast<std::size_t>(peer)];
    for (std::uint64_t at = rings_->first(peer); at < seen; ++at) {
      if (rings_->consumed(peer, at) || !rings_->peek(peer, at, m) || !stale(m.tag)) continue;
      rings_->consume(peer, at);
    }
  }
}

RequestId MpiTransport::receive_descriptor(std::unique_ptr<Transfer> t, Rank from, MsgKey key,
                                           int tag, std::size_t bytes) {
  t->id = next_id_++;
  t->receive = true;
  t->peer = from;
  t->seq = key.seq;
  t->tag = tag;
  t->bytes = bytes;
  t->descriptor = std::make_unique<Descriptor>();
  post(true, from, key.seq, shm_comm_, tag, t->descriptor.get(), sizeof(Descriptor),
       Part::kDescriptor, t->id);
  ++t->mpi_pending;
  return start_transfer(std::move(t));
}

RequestId MpiTransport::start_transfer(std::unique_ptr<Transfer> t) {
  const RequestId id = t->id;
  transfers_.push_back(std::move(t));
  return id;
}

const MpiTransport::Transfer* MpiTransport::find_send_of(std::span<const std::byte> data) const {
  for (const auto& t : transfers_) {
    if (!t->receive && t->in_arena && t->src.data() == data.data() &&
        t->src.size() == data.size()) {
      return t.get();
    }
  }
  return nullptr;
}

MpiTransport::Transfer* MpiTransport::find_transfer(RequestId id) {
  for (const auto& t : transfers_) {
    if (t->id == id) return t.get();
  }
  return nullptr;
}

bool MpiTransport::copy_in(Transfer& t) {
  if (t.moved == t.bytes) return false;
  // The block's progress, not the transfer's: sends that share the block fill it together.
  const auto published = static_cast<std::size_t>(shm_->published(t.block));
  if (published == t.bytes) {
    t.moved = t.bytes;
    return false;
  }
  const std::size_t n = std::min(kChunkBytes, t.bytes - published);
  std::memcpy(shm_->payload(t.block) + published, t.src.data() + published, n);
  arena_bytes_copied_in_ += n;
  t.moved = published + n;
  shm_->publish(t.block, t.moved);
  return true;
}

bool MpiTransport::copy_out(Transfer& t) {
  if (t.data_done) return false;
  const std::uint64_t written = shm_->written(t.peer, t.block);
  const std::byte* payload = shm_->peer_payload(t.peer, t.block);
  if (t.reduce && t.reduce.by_parts() && t.reduce.granule() > 0) {
    // Combined straight from the block as the sender fills it, whole elements at a time:
    // the reduction follows the sender's copy instead of starting after it (docs/design.md,
    // "The same-node channel").
    const std::uint64_t ready =
        written >= t.bytes ? t.bytes : written - written % t.reduce.granule();
    if (ready <= t.moved) return false;
    t.reduce.combine_part(std::span<const std::byte>(payload + t.moved, ready - t.moved), t.moved);
    t.moved = ready;
  } else if (t.reduce) {
    if (written < t.bytes) return false;
    t.reduce(std::span<const std::byte>(payload, t.bytes));  // straight from the block
    t.moved = t.bytes;
  } else if (written > t.moved) {
    std::memcpy(t.dst.data() + t.moved, payload + t.moved, written - t.moved);
    t.moved = written;
  } else if (t.moved < t.bytes) {
    return false;
  }
  t.data_done = t.moved == t.bytes;
  return true;
}

void MpiTransport::part_done(Transfer& t, Part part, const MPI_Status& status) {
  --t.mpi_pending;
  if (!t.receive) return;     // a send's parts only need to be complete
  if (part == Part::kData) {  // the data came by plain MPI
    int received = 0;
    MPI_Get_count(&status, MPI_BYTE, &received);
    if (static_cast<std::size_t>(received) != t.bytes) {
      fail(fmt::format("rank {}: the message from rank {} (seq {}) has {} bytes, expected {}",
                       rank_, t.peer, t.seq, received, t.bytes));
    }
    if (t.reduce) t.reduce(std::span<const std::byte>(t.staging.get(), t.bytes));
    t.data_done = true;
    return;
  }
  int received = 0;
  MPI_Get_count(&status, MPI_BYTE, &received);
  if (received != static_cast<int>(sizeof(Descriptor))) {
    fail(fmt::format(
        "rank {}: the same-node descriptor of the message from rank {} (seq {}) has {} bytes "
        "instead of {} (do all ranks run the same optcoll?)",
        rank_, t.peer, t.seq, received, sizeof(Descriptor)));
  }
  const Descriptor& d = *t.descriptor;
  t.described = true;
  t.in_arena = d.in_arena != 0;
  t.block = d.block;
  if (d.bytes != t.bytes) {
    if (t.in_arena) {
      shm_->consume(t.peer, t.block);  // the sender may reuse it
      t.in_arena = false;
    }
    fail(fmt::format("rank {}: the message from rank {} (seq {}) has {} bytes, expected {}", rank_,
                     t.peer, t.seq, d.bytes, t.bytes));
  }
  if (!t.in_arena) {  // the data follow on the same communicator and tag
    void* target = t.dst.data();
    if (t.reduce) {
      t.staging = std::make_unique_for_overwrite<std::byte[]>(t.bytes);
      target = t.staging.get();
    }
    post(true, t.peer, t.seq, shm_comm_, t.tag, target, t.bytes, Part::kData, t.id);
    ++t.mpi_pending;
  }
}

bool MpiTransport::move_shared_data(std::vector<RequestId>& done) {
  bool moved = false;
  for (std::size_t i = 0; i < transfers_.size();) {
    Transfer& t = *transfers_[i];
    if (t.in_arena && t.described) moved = (t.receive ? copy_out(t) : copy_in(t)) || moved;
    const bool data_there =
        t.receive ? t.described && t.data_done : !t.in_arena || t.moved == t.bytes;
    if (t.mpi_pending == 0 && data_there) {
      if (t.receive && t.in_arena) shm_->consume(t.peer, t.block);
      if (!t.receive && t.in_arena) shm_->release(t.block);
      done.push_back(t.id);
      transfers_[i] = std::move(transfers_.back());
      transfers_.pop_back();
      continue;
    }
    ++i;
  }
  return moved;
}

bool MpiTransport::confirm_mismatch(RequestId id, std::vector<Suspect>& hits) const {
  int seen = 1;
  std::uint64_t first_poll = polls_;
  for (const Suspect& s : suspects_) {
    if (s.id != id) continue;
    seen = s.probes + 1;
    first_poll = s.first_poll;
  }
  hits.push_back(Suspect{id, seen, first_poll});
  return seen >= kMismatchProbes && polls_ - first_poll >= kMismatchPolls;
}

bool MpiTransport::found_elsewhere(Rank peer, int tag, Channel expected, MPI_Status& status,
                                   Channel& where) const {
  int flag = 0;
  if (expected != Channel::kPlain) {
    MPI_Iprobe(peer, tag, data_, &flag, &status);
    where = Channel::kPlain;
    if (flag != 0) return true;
  }
  if (expected != Channel::kArena) {
    MPI_Iprobe(peer, tag, shm_comm_, &flag, &status);
    where = Channel::kArena;
    if (flag != 0) return true;
  }
  where = Channel::kRing;
  return expected != Channel::kRing && ring_message_size(peer, tag).has_value();
}

std::uint64_t MpiTransport::size_elsewhere(Rank peer, int tag, Channel where,
                                           const MPI_Status& status) {
  if (where == Channel::kPlain) {
    int count = 0;
    MPI_Get_count(&status, MPI_BYTE, &count);
    return static_cast<std::uint64_t>(count);
  }
  if (where == Channel::kRing) return ring_message_size(peer, tag).value_or(0);
  // A descriptor: taken, and its block given back.
  Descriptor d;
  MPI_Recv(&d, sizeof(Descriptor), MPI_BYTE, peer, tag, shm_comm_, MPI_STATUS_IGNORE);
  if (d.in_arena != 0) shm_->consume(peer, d.block);
  return d.bytes;
}

void MpiTransport::probe_mismatches() {
  if (shm_ == nullptr) return;
  // A same-node message goes by one of three channels, by its size (a ring, plain MPI, or
  // the arena with a descriptor): a receive whose message waits on another channel than its
  // own has a sender that classified it otherwise, so the two sizes disagree across a
  // threshold. It is a mismatch only if the message is still there, and the receive still
  // without its own, several probes and polls later: with uncounted calls (tag = seq) a
  // sender that has finished this call may already have sent the next call's message with
  // the same tag, and MPI does not order messages across communicators, so one probe can
  // see that message before progress has delivered the one sent ahead of it (mpi_grid under
  // CI load).
  std::vector<Suspect> hits;
  const auto check = [&](RequestId id, Rank peer, int tag, std::int32_t seq, std::size_t bytes,
                         Channel channel) {
    MPI_Status status;
    Channel where = channel;
    if (!found_elsewhere(peer, tag, channel, status, where) || !confirm_mismatch(id, hits)) return;
    const std::uint64_t size = size_elsewhere(peer, tag, where, status);
    fail(fmt::format("rank {}: the message from rank {} (seq {}) has {} bytes, expected {}", rank_,
                     peer, seq, size, bytes));
  };
  for (const auto& t : transfers_) {
    if (t->receive && !t->described)
      check(t->id, t->peer, t->tag, t->seq, t->bytes, Channel::kArena);
  }
  for (std::size_t i = 0; i < pending_.size(); ++i) {
    const Pending p = pending_[i];
    if (!p.receive || p.part != Part::kWhole || !shm_->on_node(p.peer)) continue;
    check(p.id, p.peer, p.tag, p.seq, p.bytes, Channel::kPlain);
  }
  for (const RingReceive& r : ring_receives_) {
    check(r.id, r.peer, r.tag, r.seq, r.dst.size(), Channel::kRing);
  }
  suspects_ = std::move(hits);
}

void MpiTransport::take_notice(const MPI_Status& status) {
  int length = 0;
  MPI_Get_count(&status, MPI_CHAR, &length);
  std::string text(notice_in_.data(), static_cast<std::size_t>(std::max(0, length)));
  // "<call>\n<reason>": the call it is about (0 when calls are not used).
  std::uint64_t call = 0;
  if (const auto newline = text.find('\n'); newline != std::string::npos) {
    call = std::strtoull(text.substr(0, newline).c_str(), nullptr, 10);
    text.erase(0, newline + 1);
  }
  const std::string message = fmt::format("rank {} failed: {}", status.MPI_SOURCE, text);
  check_mpi(MPI_Irecv(notice_in_.data(), kMaxNoticeBytes, MPI_CHAR, MPI_ANY_SOURCE, kNoticeTag,
                      control_, &notice_recv_),
            "MPI_Irecv");
  if (call == call_) {
    failed_ = message;
    failed_by_notice_ = true;
    throw TransportError(message);
  }
  // About a call this rank finished (ignore) or has not reached (keep).
  if (call > call_) future_notices_.emplace(call, message);
}

void MpiTransport::test_once(std::vector<RequestId>& done, bool quick) {
  ++polls_;
  if (quick && requests_.size() == 1) {
    test_single(done);
    return;
  }
  // The abort notice's receive rides at the end of the same MPI_Testsome: a separate
  // MPI_Test per poll made a p = 4 ping-pong on 2 cores 4.5 us instead of 0.1-0.3 (Open MPI
  // 4.1; its MPI_Test progresses when the request is not complete, and yields the CPU each
  // time when ranks outnumber cores).
  const std::size_t data_requests = requests_.size();
  if (data_requests == 0 && notice_recv_ == MPI_REQUEST_NULL) return;
  requests_.push_back(notice_recv_);
  const int n = static_cast<int>(requests_.size());
  auto& indices = test_indices_;
  auto& statuses = test_statuses_;
  // Only grown: resizing them to each poll's count re-initialized the statuses whenever a
  // request had been added (about 100 instructions per small call).
  if (indices.size() < requests_.size()) {
    indices.resize(requests_.size());
    statuses.resize(requests_.size());
  }
  int count = 0;
  const int code = MPI_Testsome(n, requests_.data(), &count, indices.data(), statuses.data());
  notice_recv_ = requests_.back();  // MPI_REQUEST_NULL if it completed
  requests_.pop_back();
  if (code != MPI_SUCCESS && code != MPI_ERR_IN_STATUS) check_mpi(code, "MPI_Testsome");
  if (count == MPI_UNDEFINED || count == 0) return;
  // A notice first (as before the data: it may fail this call).
  for (int k = 0; k < count; ++k) {
    if (static_cast<std::size_t>(indices[static_cast<std::size_t>(k)]) != data_requests) continue;
    take_notice(statuses[static_cast<std::size_t>(k)]);
  }
  for (int k = 0; k < count; ++k) {
    const auto i = static_cast<std::size_t>(indices[static_cast<std::size_t>(k)]);
    if (i == data_requests) continue;
    const MPI_Status& status = statuses[static_cast<std::size_t>(k)];
    request_done(i, status, code == MPI_ERR_IN_STATUS ? status.MPI_ERROR : MPI_SUCCESS, done);
  }
  drop_completed();
}

void MpiTransport::test_single(std::vector<RequestId>& done) {
  int flag = 0;
  MPI_Status status;
  // MPI_Test, unlike MPI_Testsome, looks at the request again after its progress call
  // (Open MPI 4.1): a message that progress call takes in is reported by this poll.
  const int code = MPI_Test(requests_.data(), &flag, &status);
  if (flag == 0) {
    check_mpi(code, "MPI_Test");
    return;
  }
  // MPI_Test reports a failed request by its return code (the status's MPI_ERROR field is
  // set only by the calls that complete several requests).
  request_done(0, status, code, done);
  drop_completed();
}

void MpiTransport::request_done(std::size_t i, const MPI_Status& status, int error,
                                std::vector<RequestId>& done) {
  const Pending p = pending_[i];  // a copy: part_done() may post more requests
  if (error != MPI_SUCCESS && p.receive) {
    fail(fmt::format(
        "rank {}: the message from rank {} (seq {}) is larger than the {} bytes expected ({})",
        rank_, p.peer, p.seq, p.bytes, mpi_error_text(error)));
  }
  if (error != MPI_SUCCESS) {
    fail(fmt::format("rank {}: the send to rank {} (seq {}) failed: {}", rank_, p.peer, p.seq,
                     mpi_error_text(error)));
  }
  if (p.part != Part::kWhole) {
    if (Transfer* t = find_transfer(p.id)) part_done(*t, p.part, status);
    return;
  }
  if (p.receive) {
    int received = 0;
    MPI_Get_count(&status, MPI_BYTE, &received);
    if (static_cast<std::size_t>(received) != p.bytes) {
      fail(fmt::format("rank {}: the message from rank {} (seq {}) has {} bytes, expected {}",
                       rank_, p.peer, p.seq, received, p.bytes));
    }
  }
  done.push_back(p.id);
}

void MpiTransport::drop_completed() {
  // MPI set the completed requests to MPI_REQUEST_NULL (or the caller did).
  std::size_t kept = 0;
  for (std::size_t i = 0; i < requests_.size(); ++i) {
    if (requests_[i] == MPI_REQUEST_NULL) continue;
    if (kept != i) {
      requests_[kept] = requests_[i];
      pending_[kept] = pending_[i];
    }
    ++kept;
  }
  requests_.resize(kept);
  pending_.resize(kept);
}

bool MpiTransport::multi_chunk_transfer() const {
  return std::any_of(transfers_.begin(), transfers_.end(),
                     [](const auto& t) { return t->bytes > kChunkBytes; });
}

bool MpiTransport::take_finished(std::vector<RequestId>& done) {
  if (finished_.empty()) return false;
  done.insert(done.end(), finished_.begin(), finished_.end());
  finished_.clear();
  return requests_.empty() && transfers_.empty() && ring_receives_.empty() && ring_sends_.empty();
}

bool MpiTransport::poll_once(bool quick, std::size_t before, std::vector<RequestId>& done,
                             bool& multi_chunk) {
  // The rings first (no MPI call); MPI only for MPI's own requests while the poll is quick.
  bool moved = rings_ != nullptr && poll_rings(done);
  if (!quick || !requests_.empty()) test_once(done, quick);
  // Copying to do: a few chunks per MPI poll, and no pause. (Looked at only when a same-node
  // transfer is under way: a small call's polls skip it.)
  multi_chunk = false;
  if (!transfers_.empty()) {
    bool copied = move_shared_data(done);
    for (int round = 1; copied && round < kChunksPerPoll && done.size() == before; ++round) {
      copied = move_shared_data(done);
    }
    moved = moved || copied;
    multi_chunk = multi_chunk_transfer();
  }
  return moved;
}

void MpiTransport::do_wait_some(std::chrono::milliseconds timeout, std::vector<RequestId>& done) {
  check_usable();
  using Clock = std::chrono::steady_clock;
  const std::size_t before = done.size();
  if (take_finished(done)) return;  // requests complete since they were posted, and no other
  // Where the node has a CPU for every rank: poll without yielding (with a pause between
  // polls while a same-node transfer of several chunks is under way) for
  // SpinBudget::kLongSpin, or for kSpin while the node is oversubscribed (other programs
  // keep its CPUs busy: spin_wait.h), then sleep. Where ranks outnumber the CPUs:
  // poll without yielding for kHotSpin, then yield the CPU between polls (to peers that
  // share it) until kSpin, then sleep in naps of at most 100 us (next_nap: a longer nap
  // ends late, and on a crowded node every rank of a tree waits long). A message from a running
  // peer comes within a microsecond or two, and a sched_yield costs about one even when nothing
  // else is runnable (p = 2 ping-pong of 8 B: 1.2-1.7 us yielding at once, 0.44-0.50 with 10 us of
  // polling first). Not while a same-node transfer of several chunks is under way: polling
  // its block without a break slowed the peer that fills it (p = 2 reduce of 256 KiB: 37 us
  // instead of 26, medians of 4 runs), while yielding at once during single-chunk ones
  // slowed them (allgather of 32 KiB: 7.5 us instead of 6.2). A sleep of any length costs
  // about 60 us on Linux (timer slack), which measured as 80 us per small bcast.
  // The clock is read only after kPollsBeforeClock empty polls: most waits for a small
  // message end within a few, and on a VM a clock read costs as much as a poll (measured:
  // a p = 2 exchange of 8 B, 0.36 us per round with a read per empty poll).
  constexpr auto kHotSpin = std::chrono::microseconds{10};
  constexpr int kPollsBeforeClock = 16;
  constexpr int kQuickPolls = 16;
  std::chrono::microseconds pause = kFirstNap;
  std::optional<Clock::time_point> begin;  // read once there is nothing to return at once
  Clock::time_point spin_end;              // when polling without yielding ends
  auto next_probe = Clock::time_point::max();
  int empty_polls = 0;
  // A wait's first kQuickPolls polls test a single outstanding request alone (test_once);
  // every later poll, and a wait without timeout, looks at the abort notice too. Counted
  // per poll, whatever the poll did: a wait for one message of several chunks (its polls
  // move data, and do not count as empty) must still see a notice (pmpi_mismatched_bcast
  // timed out in half its runs when only empty polls counted).
  int polls = 0;
  while (true) {
    const bool quick = polls < kQuickPolls && timeout.count() > 0;
    ++polls;
    bool multi_chunk = false;
    const bool moved = poll_once(quick, before, done, multi_chunk);
    if (done.size() > before) return;
    if (moved) continue;
    if (empty_polls < kPollsBeforeClock && timeout.count() > 0 && !multi_chunk) {
      ++empty_polls;
      continue;
    }
    const auto now = Clock::now();
    if (!begin) {
      begin = now;
      if (!waited_since_) waited_since_ = now;
      next_probe = now + kMismatchProbeAfter;
      spin_end = now + spin_.at(now);
    }
    if (now - *begin >= timeout) return;
    if (now >= next_probe) {
      probe_mismatches();
      next_probe = now + kMismatchProbeAfter;
    }
    // A CPU of our own: keep it (a yield under load hands the rest of the time slice,
    // milliseconds, to whatever else runs there: 8 ms instead of 60 us for an allreduce of
    // 256 KiB at p = 2 beside two busy loops, docs/design.md, "How the MPI transport waits").
    if (!ranks_outnumber_cpus_ && now < spin_end) {
      if (multi_chunk) relax_between_polls();
      continue;
    }
    if (now - *begin < kHotSpin && !multi_chunk) continue;
    if (now - *begin < kSpin && ranks_outnumber_cpus_) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(pause);
      pause = next_nap(pause, ranks_outnumber_cpus_);
    }
  }
}

void MpiTransport::do_cancel(std::span<const RequestId> ids) {
  for (const RequestId id : ids) {
    for (std::size_t i = 0; i < pending_.size(); ++i) {
      if (pending_[i].id != id || requests_[i] == MPI_REQUEST_NULL) continue;
      if (pending_[i].receive) {
        MPI_Cancel(&requests_[i]);
        MPI_Wait(&requests_[i], MPI_STATUS_IGNORE);
      } else {
        MPI_Request_free(&requests_[i]);
      }
    }
    for (std::size_t i = 0; i < transfers_.size(); ++i) {
      Transfer& t = *transfers_[i];
      if (t.id != id) continue;
      // A block this rank was reading goes back to its owner; a descriptor MPI may still
      // read stays alive until the transport goes.
      if (t.receive && t.in_arena) shm_->consume(t.peer, t.block);
      if (!t.receive && t.in_arena) shm_->release(t.block);
      if (!t.receive) released_.push_back(std::move(t.descriptor));
      transfers_[i] = std::move(transfers_.back());
      transfers_.pop_back();
      break;
    }
  }
  const auto cancelled = [&](RequestId id) {
    return std::find(ids.begin(), ids.end(), id) != ids.end();
  };
  std::erase_if(finished_, cancelled);
  std::erase_if(ring_receives_, [&](const RingReceive& r) { return cancelled(r.id); });
  std::erase_if(ring_sends_, [&](const RingSend& r) { return cancelled(r.id); });
  drop_completed();
  // A cancelled collective leaves its communicator in an unknown state (until the next
  // call, when calls are numbered).
  if (failed_.empty() && !ids.empty()) failed_ = "a collective was abandoned";
}

void MpiTransport::abort(const std::string& reason) {
  if (aborted_call_ == call_ + 1) return;  // told the others about this call already
  aborted_call_ = call_ + 1;
  auto text = std::make_unique<std::string>(
      fmt::format("{}\n{}", call_, reason.substr(0, kMaxNoticeBytes - 32)));
  for (Rank r = 0; r < size_; ++r) {
    if (r == rank_) continue;
    MPI_Request request = MPI_REQUEST_NULL;
    if (MPI_Isend(text->data(), static_cast<int>(text->size()), MPI_CHAR, r, kNoticeTag, control_,
                  &request) == MPI_SUCCESS) {
      notice_sends_.push_back(request);
    }
  }
  notice_out_.push_back(std::move(text));
  if (failed_.empty()) failed_ = reason;
}

}  // namespace optcoll::mpi
