// SPDX-License-Identifier: Apache-2.0
// File: the MPI transport (mpi_transport.h).
#include "optcoll/exec/mpi/mpi_transport.h"

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <thread>

#include <fmt/format.h>

#include "optcoll/model/error.h"

namespace optcoll::mpi {
namespace {

constexpr int kNoticeTag = 1;
constexpr int kMaxNoticeBytes = 4096;
constexpr int kSeqBits = 16;  // with calls: the low bits of a tag are the seq

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

}  // namespace

MpiTransport::MpiTransport(MPI_Comm comm) {
  check_mpi(MPI_Comm_dup(comm, &data_), "MPI_Comm_dup");
  check_mpi(MPI_Comm_dup(comm, &control_), "MPI_Comm_dup");
  MPI_Comm_set_errhandler(data_, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(control_, MPI_ERRORS_RETURN);
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
  if (notice_recv_ != MPI_REQUEST_NULL) {
    MPI_Cancel(&notice_recv_);
    MPI_Wait(&notice_recv_, MPI_STATUS_IGNORE);
  }
  for (MPI_Request& r : notice_sends_) {
    if (r != MPI_REQUEST_NULL) MPI_Request_free(&r);
  }
  MPI_Comm_free(&data_);
  MPI_Comm_free(&control_);
}

int MpiTransport::tag_for(Rank peer, MsgKey key) const {
  const int seq_limit = call_ == 0 ? tag_ub_ : (1 << kSeqBits) - 1;
  if (key.seq < 0 || key.seq > seq_limit) {
    throw TransportError(
        fmt::format("rank {}: message seq {} to or from rank {} exceeds this MPI's largest tag {}",
                    rank_, key.seq, peer, seq_limit));
  }
  if (call_ == 0) return key.seq;
  const auto calls = static_cast<std::uint64_t>(tag_ub_ >> kSeqBits) + 1;  // >= 1
  return static_cast<int>((call_ % calls) << kSeqBits) + key.seq;
}

void MpiTransport::begin_call(std::uint64_t call) {
  call_ = call;
  failed_.clear();
  // Requests a failed call left (cancelled receives, released sends) are gone already;
  // a notice about this call that came early fails it now.
  for (auto it = future_notices_.begin(); it != future_notices_.end();) {
    if (it->first < call_) {
      it = future_notices_.erase(it);
    } else if (it->first == call_) {
      failed_ = it->second;
      it = future_notices_.erase(it);
    } else {
      ++it;
    }
  }
}

void MpiTransport::check_usable() const {
  if (failed_.empty()) return;
  if (call_ != 0) throw TransportError(failed_);  // this call failed (a notice came early)
  throw TransportError(fmt::format(
      "rank {}: this MPI transport failed earlier ({}); make a new one", rank_, failed_));
}

void MpiTransport::fail(const std::string& message) {
  failed_ = message;
  throw TransportError(message);
}

RequestId MpiTransport::isend(Rank to, MsgKey key, std::span<const std::byte> data) {
  check_usable();
  if (data.size() > static_cast<std::size_t>(INT_MAX)) {
    throw TransportError(
        fmt::format("rank {}: a message of {} bytes exceeds MPI's int count", rank_, data.size()));
  }
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Isend(data.data(), static_cast<int>(data.size()), MPI_BYTE, to, tag_for(to, key),
                      data_, &request),
            "MPI_Isend");
  const RequestId id = next_id_++;
  requests_.push_back(request);
  pending_.push_back({id, false, to, key.seq, data.size()});
  return id;
}

RequestId MpiTransport::irecv(Rank from, MsgKey key, std::span<std::byte> data) {
  check_usable();
  if (data.size() > static_cast<std::size_t>(INT_MAX)) {
    throw TransportError(
        fmt::format("rank {}: a message of {} bytes exceeds MPI's int count", rank_, data.size()));
  }
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Irecv(data.data(), static_cast<int>(data.size()), MPI_BYTE, from,
                      tag_for(from, key), data_, &request),
            "MPI_Irecv");
  const RequestId id = next_id_++;
  requests_.push_back(request);
  pending_.push_back({id, true, from, key.seq, data.size()});
  return id;
}

void MpiTransport::poll_abort_notice() {
  int flag = 0;
  MPI_Status status;
  if (notice_recv_ == MPI_REQUEST_NULL) return;
  MPI_Test(&notice_recv_, &flag, &status);
  if (flag == 0) return;
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
  if (call != call_) {  // about a call this rank finished (ignore) or has not reached (keep)
    if (call > call_) future_notices_.emplace(call, message);
    check_mpi(MPI_Irecv(notice_in_.data(), kMaxNoticeBytes, MPI_CHAR, MPI_ANY_SOURCE, kNoticeTag,
                        control_, &notice_recv_),
              "MPI_Irecv");
    return;
  }
  check_mpi(MPI_Irecv(notice_in_.data(), kMaxNoticeBytes, MPI_CHAR, MPI_ANY_SOURCE, kNoticeTag,
                      control_, &notice_recv_),
            "MPI_Irecv");
  fail(message);
}

void MpiTransport::test_once(std::vector<RequestId>& done) {
  if (requests_.empty()) return;
  const int n = static_cast<int>(requests_.size());
  auto& indices = test_indices_;
  auto& statuses = test_statuses_;
  indices.resize(requests_.size());
  statuses.resize(requests_.size());
  int count = 0;
  const int code = MPI_Testsome(n, requests_.data(), &count, indices.data(), statuses.data());
  if (code != MPI_SUCCESS && code != MPI_ERR_IN_STATUS) check_mpi(code, "MPI_Testsome");
  if (count == MPI_UNDEFINED || count == 0) return;
  for (int k = 0; k < count; ++k) {
    const auto i = static_cast<std::size_t>(indices[static_cast<std::size_t>(k)]);
    const Pending& p = pending_[i];
    const MPI_Status& status = statuses[static_cast<std::size_t>(k)];
    const int error = code == MPI_ERR_IN_STATUS ? status.MPI_ERROR : MPI_SUCCESS;
    if (error != MPI_SUCCESS && p.receive) {
      fail(fmt::format(
          "rank {}: the message from rank {} (seq {}) is larger than the {} bytes expected ({})",
          rank_, p.peer, p.seq, p.bytes, mpi_error_text(error)));
    }
    if (error != MPI_SUCCESS) {
      fail(fmt::format("rank {}: the send to rank {} (seq {}) failed: {}", rank_, p.peer, p.seq,
                       mpi_error_text(error)));
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
  // Drop the completed entries (MPI set their requests to MPI_REQUEST_NULL).
  std::size_t kept = 0;
  for (std::size_t i = 0; i < requests_.size(); ++i) {
    if (requests_[i] == MPI_REQUEST_NULL) continue;
    requests_[kept] = requests_[i];
    pending_[kept] = pending_[i];
    ++kept;
  }
  requests_.resize(kept);
  pending_.resize(kept);
}

void MpiTransport::do_wait_some(std::chrono::milliseconds timeout, std::vector<RequestId>& done) {
  check_usable();
  using Clock = std::chrono::steady_clock;
  const auto begin = Clock::now();
  const auto deadline = begin + timeout;
  // Spin (yielding the CPU to oversubscribed peers) for kSpin first: a sleep of any length
  // costs about 60 us on Linux (timer slack), which measured as 80 us per small bcast.
  constexpr auto kSpin = std::chrono::microseconds{500};
  std::chrono::microseconds pause{50};
  const std::size_t before = done.size();
  while (true) {
    poll_abort_notice();
    test_once(done);
    const auto now = Clock::now();
    if (done.size() > before || now >= deadline) return;
    if (now - begin < kSpin) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, std::chrono::microseconds{1000});
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
  }
  std::size_t kept = 0;
  for (std::size_t i = 0; i < requests_.size(); ++i) {
    if (requests_[i] == MPI_REQUEST_NULL) continue;
    requests_[kept] = requests_[i];
    pending_[kept] = pending_[i];
    ++kept;
  }
  requests_.resize(kept);
  pending_.resize(kept);
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
