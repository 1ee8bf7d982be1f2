// SPDX-License-Identifier: Apache-2.0
// File: the thread backend's mailboxes, matching, hand-over and completion.
//
// Locking: every transfer happens while its pair's mailbox lock is held, after the posted
// half is taken out of the mailbox (a handed-over receive stays in the mailbox, marked,
// until its receiver takes it out the same way). That is what makes cancel() safe: a rank
// withdrawing its requests takes the same locks, so when it returns no other thread is
// still copying into or out of its memory. Inbox locks are taken only after the mailbox
// lock is released; no thread ever holds two locks at once.
#include "optcoll/exec/threads/thread_transport.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <exception>
#include <limits>
#include <optional>
#include <utility>

#include <fmt/format.h>

#include "optcoll/model/error.h"

namespace optcoll::threads {
namespace {

// The size of a message held in `parts`.
std::size_t total_bytes(std::span<const std::span<const std::byte>> parts) {
  std::size_t bytes = 0;
  for (const auto& part : parts) bytes += part.size();
  return bytes;
}

// Copies the concatenation of `parts` to `out`.
void gather(std::span<const std::span<const std::byte>> parts, std::byte* out) {
  for (const auto& part : parts) {
    if (!part.empty()) std::memcpy(out, part.data(), part.size());
    out += part.size();
  }
}

// Copies the concatenation of `from` over `to` in order (same total): one memcpy per piece
// where the two lists' boundaries differ, straight between the two ranks' memory.
void copy_spans(std::span<const std::span<const std::byte>> from,
                std::span<const std::span<std::byte>> to) {
  std::size_t i = 0;
  std::size_t j = 0;
  std::size_t used_from = 0;
  std::size_t used_to = 0;
  while (i < from.size() && j < to.size()) {
    const std::size_t n = std::min(from[i].size() - used_from, to[j].size() - used_to);
    if (n > 0) std::memcpy(to[j].data() + used_to, from[i].data() + used_from, n);
    used_from += n;
    used_to += n;
    if (used_from == from[i].size()) {
      ++i;
      used_from = 0;
    }
    if (used_to == to[j].size()) {
      ++j;
      used_to = 0;
    }
  }
}

using Clock = std::chrono::steady_clock;

}  // namespace

Fabric::Fabric(Rank nranks, std::chrono::milliseconds timeout, bool spin)
    : nranks_(nranks),
      timeout_(timeout),
      spin_(spin),
      mailboxes_(std::make_unique<Mailbox[]>(static_cast<std::size_t>(nranks) *
                                             static_cast<std::size_t>(nranks))),
      inboxes_(std::make_unique<Inbox[]>(static_cast<std::size_t>(nranks))),
      seats_(std::make_unique<Seat[]>(static_cast<std::size_t>(nranks))),
      help_slots_(std::make_unique<HelpSlot[]>(static_cast<std::size_t>(nranks))),
      rings_(std::make_unique<std::atomic<EagerRing*>[]>(static_cast<std::size_t>(nranks) *
                                                         static_cast<std::size_t>(nranks))),
      arrived_(std::make_unique<PostedQueue<Arrived>[]>(static_cast<std::size_t>(nranks) *
                                                        static_cast<std::size_t>(nranks))) {
  for (Rank r = 0; r < nranks; ++r) {
    inbox(r).completed.reserve(ThreadTransport::kCompletionsReserved);
  }
}

std::size_t Fabric::bytes_for(Rank nranks) {
  const auto p = static_cast<std::size_t>(nranks);
  const std::size_t per_pair =
      sizeof(Mailbox) + sizeof(std::atomic<EagerRing*>) + sizeof(PostedQueue<Arrived>);
  return p * p * per_pair + p * (sizeof(Inbox) + sizeof(Seat) + sizeof(HelpSlot));
}

void Fabric::SharedCopy::copy_chunks() noexcept {
  const std::size_t chunks = (bytes + chunk - 1) / chunk;
  for (std::size_t i = next.fetch_add(1, std::memory_order_relaxed); i < chunks;
       i = next.fetch_add(1, std::memory_order_relaxed)) {
    const std::size_t at = i * chunk;
    const std::size_t n = std::min(chunk, bytes - at);
    if (reduce == nullptr) {
      std::memcpy(to + at, from + at, n);
      continue;
    }
    try {
      reduce->combine_part(std::span<const std::byte>(from + at, n), at);
    } catch (const std::exception& e) {
      fail(e.what());
      return;
    } catch (...) {
      fail("unknown exception");
      return;
    }
  }
}

void Fabric::SharedCopy::fail(std::string message) noexcept {
  next.store(std::numeric_limits<std::size_t>::max() / 2, std::memory_order_relaxed);  // stop
  if (!failed.exchange(true, std::memory_order_relaxed)) error = std::move(message);
}

Fabric::~Fabric() {
  const auto pairs = static_cast<std::size_t>(nranks_) * static_cast<std::size_t>(nranks_);
  for (std::size_t i = 0; i < pairs; ++i) delete rings_[i].load(std::memory_order_relaxed);
}

void Fabric::EagerRing::fill(std::uint32_t position,
                             std::span<const std::span<const std::byte>> pieces) {
  std::byte* out = slots[position % kRingSlots].data.data();
  std::size_t room = kRingPayload;
  for (std::span<const std::byte> piece : pieces) {
    while (!piece.empty()) {
      if (room == 0) {
        out = slots[++position % kRingSlots].data.data();
        room = kRingPayload;
      }
      const std::size_t n = std::min(room, piece.size());
      std::memcpy(out, piece.data(), n);
      out += n;
      room -= n;
      piece = piece.subspan(n);
    }
  }
}

void Fabric::EagerRing::copy_out(std::uint32_t position, std::size_t bytes, std::byte* out) const {
  for (std::size_t done = 0; done < bytes; ++position) {
    const std::size_t n = std::min(kRingPayload, bytes - done);
    std::memcpy(out + done, slots[position % kRingSlots].data.data(), n);
    done += n;
  }
}

Fabric::EagerRing& Fabric::sender_ring(Rank from, Rank to) {
  std::atomic<EagerRing*>& slot = rings_[pair_index(from, to)];
  EagerRing* ring = slot.load(std::memory_order_relaxed);  // only this sender stores it
  if (ring == nullptr) {
    ring = new EagerRing();  // NOLINT(cppcoreguidelines-owning-memory): freed in ~Fabric
    slot.store(ring, std::memory_order_release);
    inbox(to).rings_made.fetch_add(1, std::memory_order_release);
  }
  return *ring;
}

void Fabric::wake_ring_receiver(Rank receiver) {
  Inbox& box = inbox(receiver);
  // The fence pairs with the receiver's between its `sleeping` store and its last look at
  // the rings before it sleeps: either it sees this message, or this sees it asleep.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (!box.sleeping.load(std::memory_order_relaxed)) return;
  { const std::lock_guard lock(box.mutex); }  // it is waiting on `wake` once this is free
  box.wake.notify_one();
}

void Fabric::reset() {
  const auto p = static_cast<std::size_t>(nranks_);
  for (std::size_t i = 0; i < p * p; ++i) {
    const std::lock_guard lock(mailboxes_[i].mutex);
    mailboxes_[i].sends.clear();
    mailboxes_[i].recvs.clear();
    mailboxes_[i].eager_bytes = 0;
    mailboxes_[i].eager_messages = 0;
    if (EagerRing* ring = rings_[i].load(std::memory_order_relaxed)) {
      // Positions keep counting across runs (a slot's stamp stays unique): what a failed
      // run left in the ring is dropped by moving the head to the tail.
      ring->head.store(ring->tail, std::memory_order_relaxed);
      ring->sender_head = ring->tail;
    }
    arrived_[i].clear();
  }
  for (std::size_t r = 0; r < p; ++r) {
    const std::lock_guard lock(inboxes_[r].mutex);
    inboxes_[r].completed.clear();
    inboxes_[r].failures.clear();
    inboxes_[r].handed.clear();
  }
  const std::lock_guard lock(abort_mutex_);
  abort_rank_ = kNoRank;
  abort_reason_.clear();
  aborted_.store(false, std::memory_order_release);
}

void Fabric::abort(Rank rank, const std::string& reason) {
  {
    const std::lock_guard lock(abort_mutex_);
    if (aborted_.load(std::memory_order_relaxed)) return;
    abort_rank_ = rank;
    abort_reason_ = reason;
    aborted_.store(true, std::memory_order_release);
  }
  // Taking each inbox lock after setting the flag means a rank about to sleep either sees
  // the flag or is already waiting when the notification comes.
  for (Rank r = 0; r < nranks_; ++r) {
    Inbox& box = inbox(r);
    {
      const std::lock_guard lock(box.mutex);
      box.news.fetch_add(1, std::memory_order_release);
    }
    box.wake.notify_all();
    if (fibers_ != nullptr) fibers_->poke(r);
  }
}

bool Fabric::help_others(Rank me) {
  bool any = false;
  for (Rank k = 1; k < nranks_; ++k) {
    const Rank r = (me + k) % nranks_;
    Seat& s = seat(r);
    if (!s.attached.load(std::memory_order_acquire)) continue;
    Inbox& box = inbox(r);
    const std::uint32_t news = box.news.load(std::memory_order_acquire);
    if (news == s.news_seen.load(std::memory_order_relaxed)) continue;  // nothing to take in
    std::unique_lock seat_lock(s.mutex, std::try_to_lock);
    if (!seat_lock.owns_lock() || s.progress == nullptr) continue;  // running, or detached
    s.news_seen.store(news, std::memory_order_relaxed);
    const bool changed = s.progress->advance();
    if (changed) {
      // While holding the seat (so the owner sees it only in a wait that this advance
      // interrupted) and under the inbox lock (so an owner about to sleep either sees it or
      // is woken).
      const std::lock_guard lock(box.mutex);
      s.helped.fetch_add(1, std::memory_order_release);
    }
    seat_lock.unlock();
    if (!changed) continue;
    any = true;
    box.wake.notify_one();
  }
  return any;
}

Rank Fabric::abort_rank() const {
  const std::lock_guard lock(abort_mutex_);
  return abort_rank_;
}

std::string Fabric::abort_reason() const {
  const std::lock_guard lock(abort_mutex_);
  return abort_reason_;
}

void Fabric::complete(Rank owner, RequestId id) {
  Inbox& box = inbox(owner);
  {
    const std::lock_guard lock(box.mutex);
    box.completed.push_back(id);
    box.news.fetch_add(1, std::memory_order_release);
  }
  box.wake.notify_one();
  if (fibers_ != nullptr) fibers_->poke(owner);
}

void Fabric::hand_over(Rank receiver, HandOver note) {
  Inbox& box = inbox(receiver);
  {
    const std::lock_guard lock(box.mutex);
    box.handed.push_back(note);
    box.news.fetch_add(1, std::memory_order_release);
  }
  box.wake.notify_one();
  if (fibers_ != nullptr) fibers_->poke(receiver);
}

void Fabric::fail(Rank owner, std::string message) {
  Inbox& box = inbox(owner);
  {
    const std::lock_guard lock(box.mutex);
    box.failures.push_back(std::move(message));
    box.news.fetch_add(1, std::memory_order_release);
  }
  box.wake.notify_one();
  if (fibers_ != nullptr) fibers_->poke(owner);
}

ThreadTransport::ThreadTransport(Fabric& fabric, Rank rank) : fabric_(fabric), rank_(rank) {
  local_done_.reserve(kCompletionsReserved);
}

void ThreadTransport::begin_run() {
  local_done_.clear();
  local_failures_.clear();
  idle_ = Clock::duration::zero();
  inbox_emptied_ = false;
}

void ThreadTransport::check_peer(Rank peer, const char* verb) const {
  if (peer < 0 || peer >= fabric_.size() || peer == rank_) {
    throw TransportError(fmt::format("rank {}: cannot {} rank {} (world of {} ranks)", rank_, verb,
                                     peer, fabric_.size()));
  }
}

void ThreadTransport::throw_if_aborted() const {
  if (fabric_.aborted()) {
    throw TransportError(fmt::format("rank {} aborted: {}", rank_, fabric_.abort_reason()));
  }
}

ThreadTransport::TransferResult ThreadTransport::transfer(
    Rank from, Rank to, MsgKey key, std::span<const std::byte> data, Fabric::PostedRecv& recv,
    std::span<const std::span<const std::byte>> parts) {
  const std::span<const std::span<const std::byte>> source =
      parts.empty() ? std::span<const std::span<const std::byte>>(&data, 1) : parts;
  const std::size_t size = total_bytes(source);
  if (size != recv.bytes) {
    return {fmt::format("message from rank {} to rank {} (epoch {}, seq {}): the send has {} "
                        "bytes but the receive expects {} bytes",
                        from, to, key.epoch, key.seq, size, recv.bytes),
            false};
  }
  if (recv.reduce) {
    // A vectored send into a receive-reduce: the combine step takes one span, so the parts
    // are gathered first (the only case with an extra copy).
    std::vector<std::byte> joined;
    if (source.size() > 1) {
      joined.resize(size);
      gather(source, joined.data());
      data = joined;
    } else {
      data = source[0];
    }
    const std::optional<std::string> failure =
        combine(rank_ == from ? to : from, data, recv.reduce);
    if (failure) {
      return {fmt::format("rank {}: combining the message from rank {} (epoch {}, seq {}) "
                          "failed: {}",
                          to, from, key.epoch, key.seq, *failure),
              true};
    }
  } else if (!recv.parts.empty()) {
    copy_spans(source, recv.parts);
  } else if (worth_sharing(size, source.size())) {
    Fabric::SharedCopy job;
    job.from = source[0].data();
    job.to = recv.data.data();
    job.bytes = size;
    job.chunk = kShareChunk;
    run_shared(rank_ == from ? to : from, job);
  } else {
    gather(source, recv.data.data());
  }
  return {};
}

std::optional<std::string> ThreadTransport::combine(Rank peer, std::span<const std::byte> data,
                                                    const ReduceInto& reduce) {
  if (worth_sharing(data.size(), 1) && reduce.by_parts() && reduce.granule() > 0) {
    Fabric::SharedCopy job;
    job.from = data.data();
    job.reduce = &reduce;
    job.bytes = data.size();
    job.chunk = std::max(reduce.granule(), kShareChunk / reduce.granule() * reduce.granule());
    return run_shared(peer, job);
  }
  try {
    reduce(data);
  } catch (const std::exception& e) {
    return std::string(e.what());
  }
  return std::nullopt;
}

std::optional<std::string> ThreadTransport::run_shared(Rank peer, Fabric::SharedCopy& job) {
  std::atomic<Fabric::SharedCopy*>& offered = fabric_.help_slot(peer).offered;
  Fabric::SharedCopy* none = nullptr;
  // Offered even when the peer is busy: it takes the rest once it waits.
  const bool offer = offered.compare_exchange_strong(none, &job, std::memory_order_release,
                                                     std::memory_order_relaxed);
  job.copy_chunks();
  Fabric::SharedCopy* mine = &job;
  if (offer && !offered.compare_exchange_strong(mine, nullptr, std::memory_order_relaxed)) {
    // The peer took it: it finishes its last chunk, then lets go (a peer that lost its CPU
    // to another program mid-chunk gets this one after a while).
    for (int spins = 0; !job.helper_done.load(std::memory_order_acquire); ++spins) {
      if (spins < 4096) {
        cpu_relax();
      } else {
        std::this_thread::yield();
      }
    }
  }
  if (!job.failed.load(std::memory_order_relaxed)) return std::nullopt;
  return job.error;
}

bool ThreadTransport::help_copy() {
  std::atomic<Fabric::SharedCopy*>& offered = fabric_.help_slot(rank_).offered;
  if (offered.load(std::memory_order_relaxed) == nullptr) return false;
  Fabric::SharedCopy* job = offered.exchange(nullptr, std::memory_order_acquire);
  if (job == nullptr) return false;
  std::atomic<std::uint64_t>& taken = fabric_.help_slot(rank_).taken;
  taken.store(taken.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  job->copy_chunks();
  job->helper_done.store(true, std::memory_order_release);  // its last touch of *job
  return true;
}

void ThreadTransport::finish_match(TransferResult result, bool i_am_sender, RequestId mine,
                                   Rank peer, RequestId theirs) {
  if (result.error.empty()) {
    local_done_.push_back(mine);
    fabric_.complete(peer, theirs);
  } else if (!result.receiver_only) {  // both sides fail
    local_failures_.push_back(result.error);
    fabric_.fail(peer, std::move(result.error));
  } else if (i_am_sender) {  // only the receiver (the peer) fails
    local_done_.push_back(mine);
    fabric_.fail(peer, std::move(result.error));
  } else {
    local_failures_.push_back(std::move(result.error));
    fabric_.complete(peer, theirs);
  }
}

bool ThreadTransport::ring_send(Rank to, MsgKey key, std::span<const std::byte> data,
                                std::span<const std::span<const std::byte>> parts,
                                std::size_t bytes) {
  Fabric::EagerRing& ring = fabric_.sender_ring(rank_, to);
  const std::uint32_t slots = Fabric::ring_slots_for(bytes);
  const std::uint32_t tail = ring.tail;
  if (tail + slots - ring.sender_head > Fabric::kRingSlots) {
    ring.sender_head = ring.head.load(std::memory_order_acquire);
    if (tail + slots - ring.sender_head > Fabric::kRingSlots) return false;
  }
  const std::span<const std::byte> whole[] = {data};
  ring.fill(tail, parts.empty() ? std::span<const std::span<const std::byte>>(whole) : parts);
  Fabric::EagerRing::Slot& slot = ring.slots[tail % Fabric::kRingSlots];
  slot.key = key;
  slot.bytes = static_cast<std::uint32_t>(bytes);
  slot.stamp.store(tail + 1, std::memory_order_release);
  ring.tail = tail + slots;
  fabric_.wake_ring_receiver(to);
  return true;
}

void ThreadTransport::drain_ring(Rank from) {
  Fabric::EagerRing* ring = fabric_.ring(from, rank_);
  if (ring == nullptr) return;
  std::uint32_t head = ring->head.load(std::memory_order_relaxed);
  if (!ring->published(head)) return;
  PostedQueue<Fabric::Arrived>& arrived = fabric_.arrived(from, rank_);
  Fabric::Mailbox& box = fabric_.mailbox(from, rank_);
  const std::lock_guard lock(box.mutex);  // for the posted receives (senders match them too)
  while (ring->published(head)) {
    const Fabric::EagerRing::Slot& slot = ring->slots[head % Fabric::kRingSlots];
    const std::uint32_t slots = Fabric::ring_slots_for(slot.bytes);
    const auto it = box.recvs.find(slot.key);
    if (it == box.recvs.end() || it->handed_send != 0) {
      Fabric::Arrived& kept = arrived.emplace_back();
      kept.key = slot.key;
      kept.bytes = slot.bytes;
      if (slots > 1) kept.large = take_spare_large();
      ring->copy_out(head, slot.bytes,
                     kept.large != nullptr ? kept.large->data() : kept.data.data());
    } else {
      Fabric::PostedRecv recv = box.recvs.take(it);
      // The send completed when it was published: only the receive is left to finish.
      finish_own_receive(transfer(from, rank_, slot.key, ring_message(*ring, head), recv), recv.id);
    }
    head += slots;
  }
  ring->head.store(head, std::memory_order_release);
}

const std::vector<std::pair<Rank, Fabric::EagerRing*>>& ThreadTransport::incoming_rings() {
  const std::uint32_t made = fabric_.inbox(rank_).rings_made.load(std::memory_order_acquire);
  if (made != incoming_made_) {
    incoming_made_ = made;
    incoming_.clear();
    for (Rank peer = 0; peer < fabric_.size(); ++peer) {
      if (Fabric::EagerRing* ring = peer != rank_ ? fabric_.ring(peer, rank_) : nullptr) {
        incoming_.emplace_back(peer, ring);
      }
    }
  }
  return incoming_;
}

bool ThreadTransport::rings_pending() {
  if (!fabric_.rings()) return false;
  for (const auto& [peer, ring] : incoming_rings()) {
    if (ring->published(ring->head.load(std::memory_order_relaxed))) return true;
  }
  return false;
}

void ThreadTransport::drain_rings() {
  if (!fabric_.rings()) return;
  for (const auto& [peer, ring] : incoming_rings()) {
    if (ring->published(ring->head.load(std::memory_order_relaxed))) drain_ring(peer);
  }
}

bool ThreadTransport::receive_arrived(Rank from, MsgKey key, Fabric::PostedRecv& recv) {
  if (!fabric_.rings()) return false;
  if (receive_from_ring_head(from, key, recv)) return true;
  drain_ring(from);
  PostedQueue<Fabric::Arrived>& arrived = fabric_.arrived(from, rank_);
  const auto it = arrived.find(key);
  if (it == arrived.end()) return false;
  TransferResult result = transfer(from, rank_, key, it->payload(), recv);
  if (it->large != nullptr) spare_large_.push_back(std::move(it->large));
  arrived.drop(it);
  finish_own_receive(std::move(result), recv.id);
  return true;
}

bool ThreadTransport::receive_from_ring_head(Rank from, MsgKey key, Fabric::PostedRecv& recv) {
  Fabric::EagerRing* ring = fabric_.ring(from, rank_);
  if (ring == nullptr) return false;
  const std::uint32_t head = ring->head.load(std::memory_order_relaxed);
  if (!ring->published(head)) return false;
  const Fabric::EagerRing::Slot& slot = ring->slots[head % Fabric::kRingSlots];
  if (slot.key != key) return false;
  const std::uint32_t slots = Fabric::ring_slots_for(slot.bytes);
  TransferResult result = transfer(from, rank_, key, ring_message(*ring, head), recv);
  ring->head.store(head + slots,
                   std::memory_order_release);  // the slots are read: the sender may reuse them
  finish_own_receive(std::move(result), recv.id);
  return true;
}

std::unique_ptr<std::array<std::byte, ThreadTransport::kRingMessageBytes>>
ThreadTransport::take_spare_large() {
  if (spare_large_.empty()) {
    // As many again as this rank has (at least one): a list that grows by doubling makes
    // few calls allocate, as a vector's storage does.
    const std::size_t more = std::max<std::size_t>(1, large_owned_);
    for (std::size_t i = 0; i < more; ++i) {
      spare_large_.push_back(std::make_unique<std::array<std::byte, kRingMessageBytes>>());
    }
    large_owned_ += more;
  }
  auto buffer = std::move(spare_large_.back());
  spare_large_.pop_back();
  return buffer;
}

std::span<const std::byte> ThreadTransport::ring_message(const Fabric::EagerRing& ring,
                                                         std::uint32_t position) {
  const Fabric::EagerRing::Slot& slot = ring.slots[position % Fabric::kRingSlots];
  if (slot.bytes <= kRingPayload) return {slot.data.data(), slot.bytes};
  ring.copy_out(position, slot.bytes, ring_message_.data());
  return {ring_message_.data(), slot.bytes};
}

void ThreadTransport::finish_own_receive(TransferResult result, RequestId id) {
  if (result.error.empty()) {
    local_done_.push_back(id);
  } else {
    local_failures_.push_back(std::move(result.error));
  }
}

RequestId ThreadTransport::isend(Rank to, MsgKey key, std::span<const std::byte> data) {
  return send_message(to, key, data, {}, data.size());
}

RequestId ThreadTransport::isendv(Rank to, MsgKey key,
                                  std::span<const std::span<const std::byte>> parts) {
  return send_message(to, key, {}, parts, total_bytes(parts));
}

RequestId ThreadTransport::send_message(Rank to, MsgKey key, std::span<const std::byte> data,
                                        std::span<const std::span<const std::byte>> parts,
                                        std::size_t bytes) {
  check_peer(to, "send to");
  throw_if_aborted();
  const RequestId id = next_id_++;
  idle_ = Clock::duration::zero();
  if (fabric_.rings() && bytes <= kRingMessageBytes && ring_send(to, key, data, parts, bytes)) {
    local_done_.push_back(id);
    return id;
  }
  Fabric::Mailbox& box = fabric_.mailbox(rank_, to);
  std::unique_lock lock(box.mutex);
  const auto it = box.recvs.find(key);
  if (it == box.recvs.end()) {
    if (bytes <= kEagerBytes && box.eager_bytes + bytes <= kEagerMailboxBytes &&
        box.eager_messages < kEagerMailboxMessages) {
      // Eager (file comment): the mailbox keeps a copy and the send is complete.
      Fabric::PostedSend& send = box.sends.emplace_back();
      send.key = key;
      send.eager_bytes = bytes;
      std::byte* copy = send.small.data();
      if (bytes > send.small.size()) {
        auto& spares = box.spare_copies;
        if (!spares.empty() && spares.back().capacity >= bytes) {
          send.copy = std::move(spares.back().bytes);
          send.copy_capacity = spares.back().capacity;
          spares.pop_back();
        } else {
          // A new peak of copies in flight on this pair: as many spares again as are in
          // flight, so that the pool grows in O(log peak) steps (close sizes reuse them).
          send.copy_capacity = std::bit_ceil(bytes);
          send.copy = std::make_unique_for_overwrite<std::byte[]>(send.copy_capacity);
          if (spares.capacity() == 0) spares.reserve(kEagerMailboxMessages);
          const std::size_t extra = std::min(box.eager_messages, kEagerMailboxMessages);
          while (spares.size() < extra) {
            spares.push_back({std::make_unique_for_overwrite<std::byte[]>(send.copy_capacity),
                              send.copy_capacity});
          }
        }
        copy = send.copy.get();
      }
      if (!parts.empty()) {
        gather(parts, copy);
      } else if (!data.empty()) {
        std::memcpy(copy, data.data(), data.size());
      }
      box.eager_bytes += bytes;
      ++box.eager_messages;
      lock.unlock();
      local_done_.push_back(id);
      return id;
    }
    Fabric::PostedSend& send = box.sends.emplace_back();
    send.key = key;
    send.id = id;
    send.data = data;
    send.parts.assign(parts.begin(), parts.end());
    return id;
  }
  // (A vectored send is not handed over: the receiver takes a single span.)
  if (parts.empty() && data.size() >= kHandOverBytes && data.size() == it->bytes &&
      fabric_.inbox(to).idle.load(std::memory_order_relaxed)) {
    // The receiver sleeps: let it do the transfer into its own memory (file comment).
    it->handed_send = id;
    it->handed_data = data;
    lock.unlock();
    fabric_.hand_over(to, {rank_, key});
    return id;
  }
  Fabric::PostedRecv recv = box.recvs.take(it);
  TransferResult result = transfer(rank_, to, key, data, recv, parts);
  lock.unlock();
  finish_match(std::move(result), true, id, to, recv.id);
  return id;
}

RequestId ThreadTransport::post_recv(Rank from, MsgKey key, Fabric::PostedRecv recv) {
  check_peer(from, "receive from");
  throw_if_aborted();
  const RequestId id = next_id_++;
  recv.key = key;
  recv.id = id;
  idle_ = Clock::duration::zero();
  if (receive_arrived(from, key, recv)) return id;
  Fabric::Mailbox& box = fabric_.mailbox(from, rank_);
  std::unique_lock lock(box.mutex);
  const auto it = box.sends.find(key);
  if (it == box.sends.end()) {
    box.recvs.push_back(std::move(recv));
    return id;
  }
  Fabric::PostedSend send = box.sends.take(it);
  if (send.eager()) {
    box.eager_bytes -= send.eager_bytes;
    --box.eager_messages;
  }
  TransferResult result = transfer(from, rank_, key, send.payload(), recv, send.parts);
  if (send.copy != nullptr && box.spare_copies.size() < kEagerMailboxMessages) {
    if (box.spare_copies.capacity() == 0) box.spare_copies.reserve(kEagerMailboxMessages);
    box.spare_copies.push_back({std::move(send.copy), send.copy_capacity});
  }
  lock.unlock();
  if (send.eager()) {
    // An eager send completed when it was posted: only this side is left to finish. A size
    // mismatch fails this rank, which then aborts the world (the sender has moved on).
    finish_own_receive(std::move(result), id);
    return id;
  }
  finish_match(std::move(result), false, id, from, send.id);
  return id;
}

void ThreadTransport::take_hand_overs(const std::vector<Fabric::HandOver>& notes) {
  for (const Fabric::HandOver& note : notes) {
    Fabric::Mailbox& box = fabric_.mailbox(note.from, rank_);
    std::unique_lock lock(box.mutex);
    const auto it = box.recvs.find(note.key);
    // Gone or no longer handed over: this rank or the sender cancelled it.
    if (it == box.recvs.end() || it->handed_send == 0) continue;
    Fabric::PostedRecv recv = box.recvs.take(it);
    TransferResult result = transfer(note.from, rank_, note.key, recv.handed_data, recv);
    lock.unlock();
    finish_match(std::move(result), false, recv.id, note.from, recv.handed_send);
  }
}

RequestId ThreadTransport::irecv(Rank from, MsgKey key, std::span<std::byte> data) {
  Fabric::PostedRecv recv;
  recv.data = data;
  recv.bytes = data.size();
  return post_recv(from, key, std::move(recv));
}

RequestId ThreadTransport::irecvv(Rank from, MsgKey key,
                                  std::span<const std::span<std::byte>> parts) {
  Fabric::PostedRecv recv;
  recv.parts.assign(parts.begin(), parts.end());
  for (const auto& part : parts) recv.bytes += part.size();
  return post_recv(from, key, std::move(recv));
}

RequestId ThreadTransport::irecv_reduce(Rank from, MsgKey key, std::size_t bytes,
                                        ReduceInto reduce) {
  OPTCOLL_CHECK(static_cast<bool>(reduce), "rank {}: irecv_reduce without a combine step", rank_);
  Fabric::PostedRecv recv;
  recv.bytes = bytes;
  recv.reduce = std::move(reduce);
  return post_recv(from, key, std::move(recv));
}

void ThreadTransport::abort(const std::string& reason) { fabric_.abort(rank_, reason); }

std::string ThreadTransport::why_no_progress_thread() const {
  if (fabric_.fibers() == nullptr) return {};
  return "the ranks run as fibers (more ranks than CPUs): a wait parks the rank's own fiber, "
         "which no other thread can do; use RankExecution::kThreads";
}

void ThreadTransport::attach(Progress& progress) {
  // Helping pays only when ranks wait for CPUs; with a CPU each they spin instead, and the
  // seat is not used at all; nor with fibers, where a waiting rank runs the others.
  if (fabric_.spins() || fabric_.fibers() != nullptr) return;
  Fabric::Seat& seat = fabric_.seat(rank_);
  seat.mutex.lock();
  seated_ = true;
  attached_ = true;
  seat.progress = &progress;
  seat.news_seen.store(fabric_.inbox(rank_).news.load(std::memory_order_acquire),
                       std::memory_order_relaxed);
  seat.attached.store(true, std::memory_order_release);
}

void ThreadTransport::detach() {
  if (!attached_) return;
  Fabric::Seat& seat = fabric_.seat(rank_);
  if (!seated_) seat.mutex.lock();  // a helper may be inside: wait for it
  seat.attached.store(false, std::memory_order_release);
  seat.progress = nullptr;
  seat.mutex.unlock();
  seated_ = false;
  attached_ = false;
}

void ThreadTransport::leave_seat() {
  if (!attached_ || !seated_) return;
  seated_ = false;
  fabric_.seat(rank_).mutex.unlock();
}

void ThreadTransport::take_seat() {
  if (!attached_ || seated_) return;
  fabric_.seat(rank_).mutex.lock();
  seated_ = true;
}

bool ThreadTransport::take_own_matches(std::vector<RequestId>& done) {
  // This rank's own matches completed and its inbox unchanged since it was last emptied:
  // nothing else can be there, so the lock is not needed. Not where ranks spin with rings:
  // there a root that returns sooner runs further ahead of its receivers into the slower
  // mailbox path (bcast p = 2: 0.16 against 0.15 us; p = 8 as fibers: 0.48-0.53 against
  // 0.55-0.65 us; docs/design.md, "Ranks as fibers").
  const Fabric::Inbox& box = fabric_.inbox(rank_);
  if (fabric_.rings() || local_done_.empty() || !local_failures_.empty() || !inbox_emptied_ ||
      box.news.load(std::memory_order_acquire) != inbox_emptied_news_) {
    return false;
  }
  take_local_done(done);
  return true;
}

void ThreadTransport::take_local_done(std::vector<RequestId>& done) {
  if (done.empty()) {
    done.swap(local_done_);  // (both keep their storage: no allocation once warm)
  } else {
    done.insert(done.end(), local_done_.begin(), local_done_.end());
  }
  local_done_.clear();
}

bool ThreadTransport::look_in_inbox(std::unique_lock<std::mutex>& lock, std::uint32_t helped,
                                    std::vector<RequestId>& done) {
  Fabric::Inbox& box = fabric_.inbox(rank_);
  while (true) {
    if (!local_failures_.empty() || !box.failures.empty()) {
      std::string message =
          local_failures_.empty() ? box.failures.front() : local_failures_.front();
      lock.unlock();
      throw TransportError(message);
    }
    if (!local_done_.empty() || !box.completed.empty()) {
      take_local_done(done);
      for (const RequestId id : box.completed) done.push_back(id);
      box.completed.clear();
      inbox_emptied_ = box.handed.empty();  // (failures are: checked above)
      inbox_emptied_news_ = box.news.load(std::memory_order_relaxed);
      return true;
    }
    if (box.handed.empty()) break;
    const std::vector<Fabric::HandOver> notes = std::move(box.handed);
    box.handed.clear();
    lock.unlock();
    take_hand_overs(notes);
    lock.lock();  // completions (or failures) are there now: look again
  }
  if (fabric_.aborted()) {
    lock.unlock();
    throw_if_aborted();
  }
  return fabric_.seat(rank_).helped.load(std::memory_order_acquire) != helped;
}

void ThreadTransport::park_fiber(FiberPool& pool, std::unique_lock<std::mutex>& lock,
                                 Clock::time_point deadline) {
  // Everything is checked up to `seen` (every change of the inbox is made under this lock;
  // fibers have no rings): park until something new, while the worker runs other ranks.
  Fabric::Inbox& box = fabric_.inbox(rank_);
  const std::uint32_t seen = box.news.load(std::memory_order_relaxed);
  lock.unlock();
  pool.park(rank_, box.news, seen, deadline);
  lock.lock();
}

bool ThreadTransport::spin_or_yield(std::unique_lock<std::mutex>& lock, std::uint32_t helped,
                                    Clock::time_point now, Clock::time_point spin_end) {
  // Everything is checked up to `seen`; spin (own CPUs) or yield the CPU (more ranks than
  // CPUs), helping other ranks meanwhile, without the locks, until something new: the inbox
  // changes only under its lock (and bumps its news), ring messages show in their slots.
  Fabric::Inbox& box = fabric_.inbox(rank_);
  Fabric::Seat& seat = fabric_.seat(rank_);
  const std::uint32_t seen = box.news.load(std::memory_order_relaxed);
  lock.unlock();
  leave_seat();
  const auto news = [&] {
    help_copy();  // a peer's copy this rank waits for: share it
    return box.news.load(std::memory_order_acquire) != seen ||
           seat.helped.load(std::memory_order_acquire) != helped || rings_pending();
  };
  const auto left = std::chrono::duration_cast<std::chrono::microseconds>(spin_end - now);
  const auto help_and_look = [&] {
    fabric_.help_others(rank_);
    return news();
  };
  const bool came =
      fabric_.spins() ? spin_wait(news, spin_, left) : yield_until(help_and_look, left);
  take_seat();  // before the inbox lock (lock order)
  drain_rings();
  lock.lock();
  return came;
}

void ThreadTransport::sleep_on_inbox(std::unique_lock<std::mutex>& lock,
                                     Clock::time_point deadline) {
  // A ring sender does not take the inbox lock unless it sees `sleeping`
  // (wake_ring_receiver): the fence pairs with the one after its publication.
  Fabric::Inbox& box = fabric_.inbox(rank_);
  box.sleeping.store(true, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (rings_pending()) {
    box.sleeping.store(false, std::memory_order_relaxed);  // a message came before the sleep
    lock.unlock();
    drain_rings();
    lock.lock();
    return;
  }
  leave_seat();
  box.wake.wait_until(lock, deadline);
  box.sleeping.store(false, std::memory_order_relaxed);
  lock.unlock();
  take_seat();
  drain_rings();
  lock.lock();
}

void ThreadTransport::do_wait_some(std::chrono::milliseconds timeout,
                                   std::vector<RequestId>& done) {
  if (take_own_matches(done)) {
    idle_ = Clock::duration::zero();
    return;
  }
  // The world's timeout counts time spent waiting since the last progress (not time spent
  // computing between waits). The clock is read only once there is nothing to return.
  Clock::time_point start;
  Clock::time_point deadline;
  bool world_limits = false;  // the world's timeout comes first (a tie: the caller reports)
  bool timed = false;
  Fabric::Inbox& box = fabric_.inbox(rank_);
  // Helpers advance the attached execution only while this thread waits below (seat left);
  // when one did, the executor must look at what changed.
  const std::uint32_t helped = fabric_.seat(rank_).helped.load(std::memory_order_acquire);
  // A wait spins (or yields) until spin_end, then sleeps; the spin ends early when news
  // comes, and resumes after a look that found nothing for this rank. As fibers, it parks.
  bool spin_over = false;
  std::optional<Clock::time_point> spin_end;
  drain_rings();  // before the inbox lock: it takes mailbox locks
  std::unique_lock lock(box.mutex);
  while (true) {  // the seat is held here whenever it is held at all
    if (look_in_inbox(lock, helped, done)) {
      lock.unlock();
      idle_ = Clock::duration::zero();
      return;
    }
    const auto now = Clock::now();
    if (!timed) {
      timed = true;
      start = now;
      const auto world_deadline = start + (fabric_.timeout() - idle_);
      const auto call_deadline = start + timeout;
      world_limits = world_deadline < call_deadline;
      deadline = world_limits ? world_deadline : call_deadline;
    }
    if (now >= deadline) break;
    box.idle.store(true, std::memory_order_relaxed);
    if (FiberPool* pool = fabric_.fibers()) {
      park_fiber(*pool, lock, deadline);
    } else if (!spin_over) {
      if (!spin_end) {
        const Clock::duration budget =
            fabric_.spins() ? Clock::duration(spin_.at(now)) : Clock::duration(kYieldBudget);
        spin_end = now + std::min<Clock::duration>(budget, deadline - now);
      }
      spin_over = !spin_or_yield(lock, helped, now, *spin_end);
    } else {
      sleep_on_inbox(lock, deadline);
    }
    box.idle.store(false, std::memory_order_relaxed);
  }
  lock.unlock();
  idle_ += Clock::now() - start;
  if (!world_limits) return;
  const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(idle_);
  const std::string reason =
      fmt::format("rank {} timed out: no progress for {} ms (the thread world's timeout)", rank_,
                  waited.count());
  fabric_.abort(rank_, reason);
  throw TransportError(reason);
}

void ThreadTransport::do_cancel(std::span<const RequestId> ids) {
  std::vector<RequestId> sorted(ids.begin(), ids.end());
  std::sort(sorted.begin(), sorted.end());
  auto listed = [&sorted](RequestId id) {
    return std::binary_search(sorted.begin(), sorted.end(), id);
  };
  for (Rank peer = 0; peer < fabric_.size(); ++peer) {
    if (peer == rank_) continue;
    {
      Fabric::Mailbox& out = fabric_.mailbox(rank_, peer);
      const std::lock_guard lock(out.mutex);
      // (Eager sends have id 0 in the mailbox: they completed when posted and stay there,
      // for the receive, like a message already on the wire.)
      out.sends.erase_if([&](const Fabric::PostedSend& s) { return listed(s.id); });
      for (Fabric::PostedRecv& r : out.recvs) {  // take back what was handed over
        if (r.handed_send != 0 && listed(r.handed_send)) {
          r.handed_send = 0;
          r.handed_data = {};
        }
      }
    }
    {
      Fabric::Mailbox& in = fabric_.mailbox(peer, rank_);
      const std::lock_guard lock(in.mutex);
      in.recvs.erase_if([&](const Fabric::PostedRecv& r) { return listed(r.id); });
    }
  }
  std::erase_if(local_done_, listed);
}

}  // namespace optcoll::threads
