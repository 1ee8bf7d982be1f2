// SPDX-License-Identifier: Apache-2.0
// File: the C API's per-communicator state and settings. The first optcoll call on an MPI
// communicator duplicates it into an MpiTransport and a Communicator (plans cached there),
// attached to the communicator as an MPI attribute: freeing the communicator frees them,
// and MPI_Finalize frees whatever is left (through an attribute on MPI_COMM_SELF, which
// MPI deletes first at finalize, while MPI is still usable).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <mpi.h>

#include "optcoll/api/communicator.h"
#include "optcoll/exec/mpi/mpi_transport.h"

namespace optcoll::capi {

class CommContext {
 public:
  explicit CommContext(MPI_Comm comm);  // collective over comm (duplicates it)
  // Completes what the context's requests have in flight and cuts them off
  // (orphan_requests), then frees the duplicates.
  ~CommContext();
  CommContext(const CommContext&) = delete;
  CommContext& operator=(const CommContext&) = delete;

  mpi::MpiTransport& transport() { return *transport_; }
  // Numbers the next collective call (the same on every rank: MPI requires that every rank
  // makes the same calls); a failure ends only the call it happens in.
  void begin_call();
  std::uint64_t call_number() const { return calls_; }
  // Wall-clock ms since the epoch when the current call began waiting for a message (for
  // hang reports): a few polls after it entered the wait, within microseconds of entering
  // the call unless it computed first; now, if it has not waited. (Worked out when asked, so
  // that a call reads no clock of its own: a clock read costs 24 ns on the project machine,
  // a tenth of a small call.)
  std::int64_t call_started_ms() const;
  // What the current call runs now (a v-collective's count exchange, then the collective
  // itself), for hang reports.
  void set_step(CollectiveKind kind) { step_ = kind; }
  std::optional<CollectiveKind> step() const { return step_; }
  // The Communicator under the current settings (remade, plans and all, when they change).
  Communicator& communicator();
  // The same, shared: a request (OPTCOLL_I*, *_init) keeps the communicator it was made on
  // alive after a settings change. The communicators of one context share their epochs.
  std::shared_ptr<Communicator> shared_communicator();

  // Working storage that the calls on this context reuse, so that a v-collective's call
  // allocates nothing once a call of its size was made: the spec a call runs, and the byte
  // counts it works with (the counts everyone uses; the root's own view, to compare). One
  // call at a time, as MPI requires of a communicator's collectives.
  struct Scratch {
    CollectiveSpec spec;
    std::vector<Count> counts;
    std::vector<Count> expected;
  };
  Scratch& scratch() { return scratch_; }

 private:
  Scratch scratch_;
  std::unique_ptr<mpi::MpiTransport> transport_;
  std::shared_ptr<std::uint32_t> epochs_ = std::make_shared<std::uint32_t>(0);
  std::shared_ptr<Communicator> communicator_;
  // Earlier communicators that requests still use (dropped when none does); destroyed,
  // completing what they have in flight, before the transport.
  std::vector<std::shared_ptr<Communicator>> retired_;
  unsigned generation_ = 0;
  std::uint64_t calls_ = 0;
  std::optional<CollectiveKind> step_;
};

// Wall-clock milliseconds since the epoch.
std::int64_t wall_clock_ms();

// The context of `comm`, created on first use. CallError(MPI_ERR_COMM) for MPI_COMM_NULL,
// an inter-communicator, or before MPI_Init / after MPI_Finalize.
CommContext& context_for(MPI_Comm comm);

// Settings every context's Communicator is made with. Changing them bumps the generation.
CommOptions current_options();
void set_model_file(const char* path);  // nullptr: the default (or $OPTCOLL_MODEL)
void set_algorithm(const std::string& collective, const std::string& algorithm);
void set_timeout_ms(int milliseconds);

// Records `message` as the last error and returns an MPI error code of class `mpi_class`
// whose MPI_Error_string is the message, after calling comm's error handler (as MPI would).
int report_error(MPI_Comm comm, int mpi_class, const std::string& message);
// The same without an error handler: for the settings calls, which are local and on no
// communicator (the caller checks the code; docs/c_api.md).
int error_code(int mpi_class, const std::string& message);
const char* last_error();

// The environment's settings (settings.h), checked on every call: the first makes their
// problems the last error (warnings included); while a fatal one stops the program
// (OPTCOLL_STRICT not 0), throws CallError(MPI_ERR_ARG) naming it.
void check_environment();

}  // namespace optcoll::capi
