// SPDX-License-Identifier: Apache-2.0
// File: the C API's per-communicator state, settings and error reporting.
#include "optcoll/capi/mpi_context.h"

#include <chrono>
#include <map>
#include <set>

#include "optcoll/algorithms/registry.h"
#include "optcoll/capi/call.h"
#include "optcoll/capi/call_error.h"
#include "optcoll/capi/model_file.h"
#include "optcoll/capi/settings.h"
#include "optcoll/model/collective.h"
#include "optcoll/model/cost_model.h"

namespace optcoll::capi {

std::int64_t wall_clock_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void CommContext::begin_call() {
  transport_->begin_call(++calls_);
  step_.reset();
}

std::int64_t CommContext::call_started_ms() const {
  const std::int64_t now = wall_clock_ms();
  const auto since = transport_->waited_since();
  if (!since) return now;
  return now - std::chrono::duration_cast<std::chrono::milliseconds>(
                   std::chrono::steady_clock::now() - *since)
                   .count();
}
namespace {

struct Settings {
  CommOptions options;
  unsigned generation = 1;
};

// Starts from the environment's settings (settings.h: read and checked there, once).
Settings& settings() {
  static Settings s = [] {
    Settings made;
    const SettingValues& values = process_settings().values;
    made.options.model = values.model;
    made.options.tuning = values.tuning;
    made.options.timeout = values.timeout;
    made.options.progress_thread = values.progress_thread;
    return made;
  }();
  return s;
}

// Contexts alive now; the MPI_COMM_SELF hook frees them at MPI_Finalize. Never destroyed:
// a program may finalize MPI from an atexit handler, after the static objects constructed
// later than its registration are gone, and the attribute callbacks still need the set.
std::set<CommContext*>& live_contexts() {
  static auto* live = new std::set<CommContext*>;
  return *live;
}

// The communicator of the last call and its context: a program calls collectives on one
// communicator again and again, and looking the context up costs four MPI calls (measured:
// 10-15% of a small call). Valid while the context lives: deleting a context (the
// communicator freed, or MPI finalized) forgets it, so a handle that MPI reuses for a new
// communicator is looked up afresh.
struct LastContext {
  MPI_Comm comm = MPI_COMM_NULL;
  CommContext* context = nullptr;
};
LastContext last_context;

int delete_context(MPI_Comm, int, void* value, void*) {
  auto* context = static_cast<CommContext*>(value);
  if (last_context.context == context) last_context = {};
  if (live_contexts().erase(context) > 0) delete context;
  return MPI_SUCCESS;
}

int delete_all_at_finalize(MPI_Comm, int, void*, void*) {
  last_context = {};
  auto& live = live_contexts();
  for (CommContext* context : live) delete context;
  live.clear();
  return MPI_SUCCESS;
}

int context_keyval() {
  static int keyval = MPI_KEYVAL_INVALID;
  if (keyval == MPI_KEYVAL_INVALID) {
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_context, &keyval, nullptr);
    int finalize_keyval = MPI_KEYVAL_INVALID;
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_all_at_finalize, &finalize_keyval,
                           nullptr);
    MPI_Comm_set_attr(MPI_COMM_SELF, finalize_keyval, nullptr);
  }
  return keyval;
}

std::string last_message;

bool mpi_running() {
  int initialized = 0;
  int finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  return initialized != 0 && finalized == 0;
}

}  // namespace

CommContext::CommContext(MPI_Comm comm)
    : transport_(std::make_unique<mpi::MpiTransport>(comm, process_settings().values.shm)) {}

CommContext::~CommContext() { orphan_requests(this); }

Communicator& CommContext::communicator() {
  // Without a shared_ptr copy (two atomic counts per call) while the settings stand.
  if (communicator_ != nullptr && generation_ == settings().generation) return *communicator_;
  return *shared_communicator();
}

std::shared_ptr<Communicator> CommContext::shared_communicator() {
  const Settings& s = settings();
  if (communicator_ == nullptr || generation_ != s.generation) {
    std::erase_if(retired_, [](const auto& c) { return c.use_count() == 1; });
    if (communicator_ != nullptr && communicator_.use_count() > 1) {
      retired_.push_back(std::move(communicator_));
    }
    CommOptions options = s.options;
    options.epochs = epochs_;
    communicator_ =
        std::make_shared<Communicator>(*transport_, std::make_shared<PlanCache>(), options);
    generation_ = s.generation;
  }
  return communicator_;
}

CommContext& context_for(MPI_Comm comm) {
  if (comm == last_context.comm && comm != MPI_COMM_NULL) return *last_context.context;
  int initialized = 0;
  int finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (initialized == 0 || finalized != 0) {
    throw_call(MPI_ERR_OTHER, "optcoll's C API is called {} MPI",
               initialized ? "after finalizing" : "before initializing");
  }
  if (comm == MPI_COMM_NULL) throw_call(MPI_ERR_COMM, "the communicator is MPI_COMM_NULL");
  int inter = 0;
  if (MPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS) {
    throw_call(MPI_ERR_COMM, "the communicator is not a valid MPI_Comm");
  }
  if (inter != 0) {
    throw_call(MPI_ERR_COMM, "inter-communicators are not supported by optcoll's C API");
  }
  const int keyval = context_keyval();
  void* value = nullptr;
  int found = 0;
  MPI_Comm_get_attr(comm, keyval, &value, &found);
  if (found != 0) {
    last_context = {comm, static_cast<CommContext*>(value)};
    return *last_context.context;
  }
  auto context = std::make_unique<CommContext>(comm);
  MPI_Comm_set_attr(comm, keyval, context.get());
  live_contexts().insert(context.get());
  last_context = {comm, context.release()};
  return *last_context.context;
}

CommOptions current_options() { return settings().options; }

void set_model_file(const char* path) {
  Settings& s = settings();
  s.options.model = path == nullptr ? process_settings().values.model
                                    : std::optional<CostModel>(read_model_file(path));
  ++s.generation;
}

void set_algorithm(const std::string& collective, const std::string& algorithm) {
  const auto kind = parse_collective(collective);
  if (!kind) throw_call(MPI_ERR_ARG, "unknown collective '{}'", collective);
  if (algorithm != "auto") algorithms::lookup(algorithm, *kind);  // throws if unknown
  Settings& s = settings();
  s.options.algorithms[collective] = algorithm;
  ++s.generation;
}

void set_timeout_ms(int milliseconds) {
  if (milliseconds <= 0) throw_call(MPI_ERR_ARG, "timeout {} ms is not positive", milliseconds);
  Settings& s = settings();
  s.options.timeout = std::chrono::milliseconds(milliseconds);
  ++s.generation;
}

int error_code(int mpi_class, const std::string& message) {
  last_message = message;
  if (!mpi_running()) return mpi_class;
  // One added code per class; its string is replaced by the latest message.
  static std::map<int, int> codes;
  auto it = codes.find(mpi_class);
  if (it == codes.end()) {
    int code = mpi_class;
    if (MPI_Add_error_code(mpi_class, &code) != MPI_SUCCESS) code = mpi_class;
    it = codes.emplace(mpi_class, code).first;
  }
  const int code = it->second;
  if (code != mpi_class) {
    const std::string text = "optcoll: " + message.substr(0, MPI_MAX_ERROR_STRING - 16);
    MPI_Add_error_string(code, text.c_str());
  }
  return code;
}

int report_error(MPI_Comm comm, int mpi_class, const std::string& message) {
  const int code = error_code(mpi_class, message);
  if (mpi_running()) MPI_Comm_call_errhandler(comm == MPI_COMM_NULL ? MPI_COMM_WORLD : comm, code);
  return code;
}

const char* last_error() { return last_message.c_str(); }

void check_environment() {
  // The settings are read once per process, so whether they stop it is decided once too.
  static const bool stops = [] {
    if (!process_settings().problems.empty()) last_message = process_settings().report();
    return process_settings().stops();
  }();
  if (stops) throw_call(MPI_ERR_ARG, "{}", process_settings().fatal_message());
}

}  // namespace optcoll::capi
