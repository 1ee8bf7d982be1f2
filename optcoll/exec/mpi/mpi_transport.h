// SPDX-License-Identifier: Apache-2.0
// File: the MPI backend's transport: every schedule op that moves data becomes non-blocking
// MPI point-to-point on communicators of its own (duplicates of the caller's), so optcoll's
// messages never match the application's; large messages between ranks of one node go
// through shared memory instead (below).
//
// Matching: MPI matches by (source, tag, communicator) and never lets a message overtake an
// earlier one with the same triple. The tag is the message's seq (its position among the
// messages of its ordered pair in one collective). Consecutive collectives need no epoch
// in the tag: a rank sends its seq-s message of call e before that of call e + 1, so a
// receive of call e always matches call e's message first.
//
// Progress: wait_some() polls MPI_Testsome over the outstanding requests and the abort
// notice's receive (MPI progresses inside it) and moves same-node data: for 10 us without a
// break, then with a sched_yield between polls until 500 us, then sleeping in growing steps
// (50 us to 1 ms), so that oversubscribed ranks leave the CPU to the peers they wait for.
// Small calls take a shorter path: a send of at most 256 bytes is tested when it is posted
// (it is usually complete then) and reported by the next wait without polling, and the first
// 16 polls of a wait for a single request test it alone with MPI_Test, which reports a
// message that its own progress call took in (MPI_Testsome reports it one poll later).
// Neither hides an abort notice from a rank that waits for it: a wait that lasts beyond
// those 16 polls (a few microseconds) looks at the notice in every poll, as before.
//
// Same-node messages: MPI libraries move a large message between processes of one node
// with one copy by the receiver through the kernel (Linux CMA); on the machines we measured
// that runs at a third to a half of memcpy speed (docs/design.md, "The same-node channel"). So a
// message of at least Options::shm_min_bytes to or from a rank of the same node goes through shared
// memory: the sender places it in a block of its own arena (ShmArena, an MPI-3 shared
// window) and sends an MPI descriptor (size, block) on a third duplicate communicator; the
// receiver copies (or reduces) straight out of the block while the sender is still filling
// it, chunk by chunk, and marks it consumed. The sender's request completes when its data
// are in the arena, the receiver's when they are in its buffer; neither waits for the
// other beyond that. When the arena is full the descriptor says so and the data follow on
// the same communicator and tag, by plain MPI. A send of the same buffer to another rank of
// the node while the first is in progress (linear allgather and bcast, a tree's root) takes
// the same block: the data are copied into the arena once for all of them. Both sides
// classify a message by its size against the same threshold (agreed by all ranks when the
// transport is made); if their sizes disagree across the threshold, one side's message sits
// on the other communicator: a receive that has waited 5 ms probes for that, and fails
// naming both sizes when two more probes 5 ms apart still find it (a later call's message
// with the same tag can sit there briefly before progress delivers this call's).
//
// Small same-node messages (at most ShmRings::kPayloadBytes = 1008 bytes, below the arena's
// threshold) go through the eager rings of shm_rings.h, without any MPI call: a send is
// complete once its slot is stamped (or, with its ring full, once room comes and it is); a
// receive takes the oldest message with its tag from the sender's ring, straight from the
// slot, when it is posted or when a later poll finds it there (each message is looked at once
// by the polls; a receive posted behind another with the same tag waits its turn, as MPI
// matches). A ring full of messages no receive wants yet has its oldest set aside (copied),
// so the sender goes on. The tag is the MPI tag the message would have had (below), so
// calls, epochs and leftovers of failed calls work as for MPI's messages; a size mismatch
// in the ring fails naming both sizes, and one across the 1008-byte threshold is found by the
// mismatch probe (below), which also looks at the rings. While only ring messages are
// outstanding, a wait's first 16 polls make no MPI call; the later ones look at the abort
// notice as always. Measured (callgrind, p = 2, 8 B allreduce of a planned call): 3,440
// instructions per call and rank through MPI, 1,830-1,850 through the rings (Open MPI's whole
// MPI_Allreduce: 1,890-1,940; docs/design.md, "Small same-node messages").
//
// Calls: a caller that numbers its collective calls (begin_call(1), begin_call(2), ...,
// the same numbers on every rank, as the C API does) gets failures scoped to one call:
// tags carry the call number (tag = (call mod H) * 2^16 + seq, H = (MPI_TAG_UB + 1) / 2^17,
// 16384 with Open MPI), so messages a failed call leaves behind never match a later call;
// abort notices carry it too, so a notice fails only the call it is about (a rank that had
// finished that call ignores it; one that has not reached it yet fails when it does); and
// the transport is usable again from the next call. Without begin_call the tag is the seq
// and a failure is final, as described below.
//
// Overlapping calls (expect_overlapping_calls(), for nonblocking collectives): from then on
// the tag carries the message's epoch instead (tag = (H + epoch mod H') * 2^16 + seq: the
// upper half of the numbers, H' = (MPI_TAG_UB + 1) / 2^16 - H), so that collectives in
// flight at once never match each other's messages (up to H' at once), nor those of calls
// made before the switch. An abort notice then fails the current call only: a collective
// still in flight from an earlier call learns of the failure at its timeout.
//
// Failures: a message of the wrong size is a TransportError naming the peer, the seq and
// both sizes (a larger one is caught by MPI as a truncation, a smaller one by its count).
// abort(reason) sends the reason to every other rank on a second duplicate communicator;
// a rank that receives it fails at once with "rank R failed: reason" instead of waiting for
// its timeout. After any failure the transport refuses further use (a failed collective can
// leave messages behind on its communicator); make a new one. Cancelling: receives are
// cancelled with MPI_Cancel; sends cannot be cancelled portably (Open MPI ignores it), so
// a pending send is released with MPI_Request_free and its buffer must outlive the
// transport's communicator (the executor's scratch and the caller's buffers normally do).
// An arena block whose descriptor a failed receiver never took stays allocated (the arena
// then falls back to plain MPI sooner); nothing else leaks.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <mpi.h>

#include "optcoll/exec/mpi/shm_arena.h"
#include "optcoll/exec/mpi/shm_rings.h"
#include "optcoll/exec/spin_wait.h"
#include "optcoll/exec/transport.h"

namespace optcoll::mpi {

class MpiTransport final : public Transport {
 public:
  // The same-node channel. The constructor agrees on these across the ranks: the channel is
  // on only if every rank wants it, with the largest threshold and the smallest arena.
  struct Options {
    bool shared_memory = true;  // use it where ranks share a node
    // Each rank's arena (at most 1 GiB per node in all: a node of k ranks gives each at
    // most 1 GiB / k). Pages are used, and count against /dev/shm, only as messages need them.
    std::size_t shm_bytes = std::size_t{32} << 20;
    std::size_t shm_min_bytes = std::size_t{16} << 10;  // messages at least this large
    // The eager rings of small messages (shm_rings.h): kAuto uses them unless the node's
    // ranks outnumber its CPUs; kAlways also there (tests: rings on any machine); kNever
    // not at all. A pair of ranks uses them only if both do (not set by the environment).
    enum class Rings : std::uint8_t { kAuto, kAlways, kNever };
    Rings rings = Rings::kAuto;
    // The environment variables that set them: OPTCOLL_SHM (0 or 1), OPTCOLL_SHM_BYTES and
    // OPTCOLL_SHM_MIN_BYTES (bytes, K/M/G suffixes).
    static constexpr const char* kVariables[] = {"OPTCOLL_SHM", "OPTCOLL_SHM_BYTES",
                                                 "OPTCOLL_SHM_MIN_BYTES"};
    // Sets the field of `variable` (one of kVariables) from its text; throws
    // Error(kInvalidArgument) naming the variable for a malformed value.
    void apply(std::string_view variable, std::string_view text);
    // The defaults, changed by the variables set (non-empty) in the environment. Throws as
    // apply(). (The C API and the PMPI library read them through optcoll/capi/settings.h.)
    static Options from_environment();
  };

  // Duplicates `comm` three times (data, abort notices, same-node descriptors); collective
  // over `comm`, as is the destructor.
  explicit MpiTransport(MPI_Comm comm);
  MpiTransport(MPI_Comm comm, Options options);
  ~MpiTransport() override;
  MpiTransport(const MpiTransport&) = delete;
  MpiTransport& operator=(const MpiTransport&) = delete;

  Rank rank() const override { return rank_; }
  Rank size() const override { return size_; }
  std::string_view backend() const override { return "mpi"; }
  std::optional<Placement> placement() const override { return placement_; }
  RequestId isend(Rank to, MsgKey key, std::span<const std::byte> data) override;
  RequestId irecv(Rank from, MsgKey key, std::span<std::byte> data) override;
  // Same-node messages are combined straight out of the sender's arena block.
  RequestId irecv_reduce(Rank from, MsgKey key, std::size_t bytes, ReduceInto reduce) override;
  // Vectored messages by plain MPI use one derived datatype (hindexed over MPI_BYTE, absolute
  // addresses) so that MPI moves the bytes between the parts and the wire with no staging
  // copy. A same-node message (through_shared_memory) goes through the channel: a receive is
  // copied out of the sender's arena block into the parts, a send is gathered first.
  RequestId isendv(Rank to, MsgKey key, std::span<const std::span<const std::byte>> parts) override;
  RequestId irecvv(Rank from, MsgKey key, std::span<const std::span<std::byte>> parts) override;
  void abort(const std::string& reason) override;
  // False after a failure (timeout, abort, wrong message): the transport refuses further
  // use, until the next begin_call.
  bool usable() const { return failed_.empty(); }
  // Whether the current failure is another rank's, told by its abort notice (the other
  // ranks know already), rather than one this rank found itself.
  bool failed_by_notice() const { return !failed_.empty() && failed_by_notice_; }
  // Starts collective call number `call` (increasing, equal on every rank; see above).
  void begin_call(std::uint64_t call);
  // When a wait of the current call (since begin_call) first read the clock: a few polls
  // after it began waiting for a message; nullopt while none has.
  std::optional<std::chrono::steady_clock::time_point> waited_since() const {
    return waited_since_;
  }
  // Throws Error(kInvalidArgument) when this MPI's tag bound leaves no room for it.
  void expect_overlapping_calls() override;
  // A progress thread calls MPI while the application's thread may too: MPI_THREAD_MULTIPLE.
  std::string why_no_progress_thread() const override;
  // Whether a message of `bytes` to or from `peer` goes through the same-node channel.
  bool through_shared_memory(Rank peer, std::size_t bytes) const;
  // The agreed threshold (SIZE_MAX when the channel is off).
  std::size_t shm_min_bytes() const { return shm_ == nullptr ? SIZE_MAX : shm_min_bytes_; }
  std::optional<std::size_t> same_node_channel_min_bytes() const override {
    return shm_ == nullptr ? std::nullopt : std::optional<std::size_t>(shm_min_bytes_);
  }
  // Bytes this rank has copied into its arena so far (a block sent to several ranks counts
  // once).
  std::uint64_t arena_bytes_copied_in() const { return arena_bytes_copied_in_; }

 protected:
  void do_wait_some(std::chrono::milliseconds timeout, std::vector<RequestId>& done) override;
  void do_cancel(std::span<const RequestId> ids) override;

 private:
  // What an outstanding MPI request is: a whole message of the executor's, or a part of a
  // same-node transfer (its descriptor, or its data when they go by plain MPI).
  enum class Part : std::uint8_t { kWhole, kDescriptor, kData };
  struct Pending {
    RequestId id = 0;  // the executor's request (for a part: its transfer's)
    bool receive = false;
    Rank peer = 0;
    std::int32_t seq = 0;
    int tag = 0;
    std::size_t bytes = 0;  // the message's size (a part's own size for descriptors)
    Part part = Part::kWhole;
  };
  // What a sender tells the receiver of a same-node message.
  struct Descriptor {
    std::uint64_t bytes = 0;
    std::uint64_t block = 0;
    std::uint64_t in_arena = 0;  // 1: in the block; 0: the data follow by plain MPI
  };
  // A same-node message in progress.
  struct Transfer {
    RequestId id = 0;
    bool receive = false;
    Rank peer = 0;
    std::int32_t seq = 0;
    int tag = 0;
    std::size_t bytes = 0;           // sent, or expected
    std::span<const std::byte> src;  // send
    std::span<std::byte> dst;        // plain receive
    ReduceInto reduce;               // receive-reduce
    std::unique_ptr<Descriptor> descriptor;
    std::unique_ptr<std::byte[]> staging;  // receive-reduce whose data came by plain MPI
    bool described = false;                // receive: the descriptor arrived (send: it was posted)
    bool in_arena = false;                 // the data are (being) moved through an arena block
    std::uint64_t block = 0;
    std::size_t moved = 0;   // bytes copied into the block (send) or out of it (receive)
    bool data_done = false;  // receive: every byte is in (or combined into) the target
    int mpi_pending = 0;     // this transfer's MPI requests not yet complete
  };

  // The constructors' common part; `from_environment`: read the options from it.
  MpiTransport(MPI_Comm comm, Options options, bool from_environment);
  // The MPI tag of a message (see above). Inline while tags do not carry epochs: the call's
  // part of the tag is worked out once per call (set_call_tags); checked_tag_for() does the
  // rest and throws for a seq out of range.
  int tag_for(Rank peer, MsgKey key) const {
    if (key.seq >= 0 && key.seq <= call_seq_limit_) return call_tag_base_ + key.seq;
    return checked_tag_for(peer, key);
  }
  int checked_tag_for(Rank peer, MsgKey key) const;
  // Sets call_tag_base_ and call_seq_limit_ from call_, epoch_tags_ and tag_ub_.
  void set_call_tags();
  // Throws unless usable() (inline: every isend, irecv and wait checks it).
  void check_usable() const {
    if (!failed_.empty()) throw_unusable();
  }
  [[noreturn]] void throw_unusable() const;
  void check_count(Rank peer, std::size_t bytes) const;
  // An abort notice arrived (`status`: its receive's): fails this call if it is about it,
  // keeps it if it is about a later call; posts the next notice receive.
  void take_notice(const MPI_Status& status);
  // One poll: an MPI_Testsome pass over the requests and the notice receive; appends
  // completed ids to `done`, throws on a failed request or a notice about this call.
  // `quick` with a single request outstanding: test_single() instead.
  void test_once(std::vector<RequestId>& done, bool quick);
  // Appends the requests that completed when they were posted to `done`; true when nothing
  // else is outstanding (no poll is needed).
  bool take_finished(std::vector<RequestId>& done);
  // One poll of a wait: the rings, MPI's requests (test_once; `quick`: see do_wait_some) and
  // a few chunks of the same-node transfers under way; whether anything moved.
  // `multi_chunk`: a transfer of several chunks is under way.
  bool poll_once(bool quick, std::size_t before, std::vector<RequestId>& done, bool& multi_chunk);
  // MPI_Test of the only outstanding request (the notice receive is not looked at).
  void test_single(std::vector<RequestId>& done);
  // Request i completed (`error`: its MPI error code): checks it, appends its id to `done`
  // (or advances its same-node transfer); throws for a failed or mis-sized message.
  void request_done(std::size_t i, const MPI_Status& status, int error,
                    std::vector<RequestId>& done);
  // Removes the entries whose requests are MPI_REQUEST_NULL from requests_ and pending_.
  void drop_completed();
  // A vectored message by plain MPI on the data communicator: `starts` and `sizes` describe
  // the parts (`bytes` in all). Makes a committed hindexed datatype for the request and frees
  // it at once (MPI keeps it alive until the request completes).
  RequestId post_parts(bool receive, Rank peer, MsgKey key, std::span<std::byte* const> starts,
                       std::span<const std::size_t> sizes, std::size_t bytes);
  RequestId post(bool receive, Rank peer, std::int32_t seq, MPI_Comm comm, int tag, void* buffer,
                 std::size_t bytes, Part part, RequestId id);
  RequestId receive_descriptor(std::unique_ptr<Transfer> t, Rank from, MsgKey key, int tag,
                               std::size_t bytes);
  RequestId start_transfer(std::unique_ptr<Transfer> transfer);
  Transfer* find_transfer(RequestId id);
  // A send in progress through an arena block of exactly `data` (the same bytes: the
  // executor leaves a pending send's buffer alone), or null.
  const Transfer* find_send_of(std::span<const std::byte> data) const;
  // A part of transfer `t` completed (status: its MPI status).
  void part_done(Transfer& t, Part part, const MPI_Status& status);
  // The sender's next chunk into its block / the receiver's copy (or combine) of what is
  // written; whether anything moved.
  bool copy_in(Transfer& t);
  bool copy_out(Transfer& t);
  // Copies what can be copied; appends finished transfers to `done`; returns whether any
  // bytes moved.
  bool move_shared_data(std::vector<RequestId>& done);
  // Whether a same-node transfer of more than one chunk is under way.
  bool multi_chunk_transfer() const;
  // The eager rings' bookkeeping: a receive posted and not yet matched, a send waiting for
  // room in its ring, a message set aside from a full ring before its receive was posted.
  struct RingReceive {
    RequestId id = 0;
    Rank peer = 0;
    int tag = 0;
    std::int32_t seq = 0;
    std::span<std::byte> dst;
  };
  struct RingSend {
    RequestId id = 0;
    Rank peer = 0;
    int tag = 0;
    std::span<const std::byte> data;
  };
  struct Arrival {
    Rank peer = 0;
    int tag = 0;
    std::uint32_t bytes = 0;
    std::array<std::byte, ShmRings::kPayloadBytes> data{};
  };
  // Whether a message of `bytes` to or from `peer` goes through an eager ring: at most
  // ShmRings::kPayloadBytes and below the arena's threshold (so OPTCOLL_SHM_MIN_BYTES=0 still
  // sends everything through the arena), to a rank of this node.
  bool through_ring(Rank peer, std::size_t bytes) const {
    return bytes <= ShmRings::kPayloadBytes && bytes < shm_min_bytes_ && rings_ != nullptr &&
           rings_->to(peer);
  }
  RequestId ring_send(Rank to, int tag, std::span<const std::byte> data);
  RequestId ring_receive(Rank from, std::int32_t seq, int tag, std::span<std::byte> data);
  // Matches the ring messages that arrived since the last poll to the receives posted for
  // them, sets aside the oldest of a full ring (arrivals_), and publishes the sends waiting
  // for room; appends completed ids to `done`; whether anything moved.
  bool poll_rings(std::vector<RequestId>& done);
  // Copies the ring message `m` from `peer` (position `at`) into `r`'s buffer and consumes
  // it; throws naming both sizes when they differ.
  void deliver_ring_message(Rank peer, std::uint64_t at, const ShmRings::Message& m,
                            const RingReceive& r);
  // Forgets the ring messages of calls before the current one (a failed call's leftovers),
  // set aside or still in their rings.
  void drop_stale_arrivals();
  // The size of the oldest ring message from `peer` with `tag` not yet received (set aside
  // or still in its slot), if there is one.
  std::optional<std::uint64_t> ring_message_size(Rank peer, int tag) const;
  // A receive whose message a probe found on the other protocol's communicator.
  struct Suspect {
    RequestId id = 0;
    int probes = 0;                // consecutive probes that found it
    std::uint64_t first_poll = 0;  // polls_ at the first of them
  };
  // Receives that have waited a while: fail those whose sender used another channel
  // (their sizes disagree across a threshold).
  void probe_mismatches();
  // The channels of a same-node message (by its size).
  enum class Channel : std::uint8_t { kRing, kPlain, kArena };
  // Whether a message from `peer` with `tag` waits on another channel than `expected`
  // (`where`; `status`: the probe's, for kPlain and kArena).
  bool found_elsewhere(Rank peer, int tag, Channel expected, MPI_Status& status,
                       Channel& where) const;
  // That message's size (a descriptor is received, and its block given back).
  std::uint64_t size_elsewhere(Rank peer, int tag, Channel where, const MPI_Status& status);
  // Records that this probe found receive `id`'s message on the other communicator (in
  // `hits`); whether that has now lasted long enough to be a mismatch.
  bool confirm_mismatch(RequestId id, std::vector<Suspect>& hits) const;
  [[noreturn]] void fail(const std::string& message);

  MPI_Comm data_ = MPI_COMM_NULL;
  MPI_Comm control_ = MPI_COMM_NULL;
  MPI_Comm shm_comm_ = MPI_COMM_NULL;  // same-node descriptors (and their fallback data)
  Rank rank_ = 0;
  Rank size_ = 0;
  int tag_ub_ = 32767;
  RequestId next_id_ = 1;
  std::vector<MPI_Request> requests_;  // parallel to pending_
  std::vector<Pending> pending_;
  // Requests complete when posted (sends MPI took at once or a ring took; receives whose
  // ring message had arrived), reported by the next wait.
  std::vector<RequestId> finished_;
  std::vector<int> test_indices_;  // MPI_Testsome's outputs, kept between polls
  std::vector<MPI_Status> test_statuses_;
  std::uint64_t polls_ = 0;        // test_once calls so far
  std::vector<Suspect> suspects_;  // what the last mismatch probe found
  std::unique_ptr<ShmArena> shm_;  // null: no same-node channel
  Placement placement_;            // where the ranks run (MPI_Comm_split_type SHARED)
  std::uint64_t arena_bytes_copied_in_ = 0;
  std::size_t shm_min_bytes_ = SIZE_MAX;
  // More ranks of this communicator on this node than the node has CPUs: a waiting rank
  // gives its CPU to the others (do_wait_some); otherwise it keeps it.
  bool ranks_outnumber_cpus_ = false;
  // How long a wait polls without yielding, where it keeps its CPU: kSpin while the node is
  // oversubscribed, longer otherwise (do_wait_some, spin_wait.h).
  static constexpr std::chrono::microseconds kSpin{500};
  SpinBudget spin_{kSpin};
  std::vector<std::unique_ptr<Transfer>> transfers_;
  // Small same-node messages (shm_rings.h; null: none). Receives posted and not yet matched,
  // sends waiting for room in their ring, and messages set aside from full rings, each in
  // order.
  std::unique_ptr<ShmRings> rings_;
  std::vector<RingReceive> ring_receives_;
  std::vector<RingSend> ring_sends_;
  std::vector<Arrival> arrivals_;
  std::vector<std::uint64_t> ring_seen_;  // per rank: ring positions looked at by poll_rings
  std::vector<Rank> ring_full_;           // poll_rings' peers whose ring is full (kept)
  // Descriptors of abandoned sends that MPI may still read (kept until destruction).
  std::vector<std::unique_ptr<Descriptor>> released_;
  std::vector<char> notice_in_;
  MPI_Request notice_recv_ = MPI_REQUEST_NULL;
  std::uint64_t call_ = 0;  // the current call (0: calls not used)
  std::optional<std::chrono::steady_clock::time_point> waited_since_;  // see waited_since()
  bool epoch_tags_ = false;           // without calls: tags carry the epoch (overlapping calls)
  int call_tag_base_ = 0;             // the tag of seq 0 in this call (without epochs)
  std::uint64_t numbered_call_ = 0;   // the call whose number set_call_tags worked out last
  std::uint64_t call_number_ = 0;     // ... and that number (call mod H)
  std::int32_t call_seq_limit_ = -1;  // the largest seq tag_for() takes inline (-1: none)
  std::uint64_t aborted_call_ = 0;    // the call this rank told the others about (+1; 0: none)
  std::map<std::uint64_t, std::string> future_notices_;   // failures of calls not reached yet
  std::vector<std::unique_ptr<std::string>> notice_out_;  // kept while their sends are pending
  std::vector<MPI_Request> notice_sends_;
  std::string failed_;             // why this transport is no longer usable ("" while it is)
  bool failed_by_notice_ = false;  // failed_ came from an abort notice
};

}  // namespace optcoll::mpi
