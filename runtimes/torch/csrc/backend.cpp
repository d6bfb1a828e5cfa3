// SPDX-License-Identifier: MIT
// The nnp backend: checks on the caller's thread, device work on lanes,
// a thread and a stream each (docs/torch.md).
#include "backend.hpp"

#include <torch/csrc/utils/pybind.h>

#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <string>
#include <thread>

namespace nnp_torch {

namespace {

const char* const kIdKey = "nnp_unique_id";
// The bounce buffer (Staging): its size, the alignment of each tensor's
// place in it, and the largest tensor that bounces unless
// NNP_TORCH_BOUNCE_MAX says otherwise (measured: docs/torch.md, Staging).
constexpr size_t kBounceBytes = 4 << 20;
constexpr size_t kBounceAlign = 64;
constexpr size_t kBounceMaxDefault = 1 << 20;
// The device's status ABORTED (docs/hw-interface.md), as
// nnp_stream_error() gives it.
constexpr uint16_t kStatusAborted = 0x15;
// The device's PEER_TIMEOUT: a peer did not answer within the timeout.
constexpr uint16_t kStatusPeerTimeout = 0x14;

// @t must be a dense CPU tensor; any other is refused by name rather than
// moved by the host. An operation that only moves data (broadcast, the
// gathers, scatter, all-to-all, send, recv) takes any dtype so: the
// device moves its bytes (NNP_UINT8).
void checkDense(const at::Tensor& t, const char* op) {
  TORCH_CHECK(
      t.device().is_cpu(),
      "nnp: ", op, ": tensors must be on the CPU, not ", t.device());
  TORCH_CHECK(
      t.layout() == at::kStrided && t.is_contiguous(),
      "nnp: ", op, ": tensors must be dense and contiguous");
}

// The libnnp type of @t for a reduction, which must be dense (checkDense)
// and of a type the device reduces.
nnp_dtype_t dtypeOf(const at::Tensor& t, const char* op) {
  checkDense(t, op);
  switch (t.scalar_type()) {
    case at::kFloat:
      return NNP_FLOAT32;
    case at::kHalf:
      return NNP_FLOAT16;
    case at::kBFloat16:
      return NNP_BFLOAT16;
    case at::kInt:
      return NNP_INT32;
    case at::kDouble:
      return NNP_FLOAT64;
    case at::kLong:
      return NNP_INT64;
    default:
      TORCH_CHECK(
          false, "nnp: ", op, ": dtype ", t.scalar_type(),
          " is not supported (Float, Half, BFloat16, Int, Double and Long are)");
  }
}

nnp_redop_t redopOf(const c10d::ReduceOp& op, const char* what) {
  const char* name = "UNUSED";
  switch (op.op_) {
    case c10d::ReduceOp::SUM:
      return NNP_SUM;
    case c10d::ReduceOp::AVG:
      return NNP_AVG;
    case c10d::ReduceOp::PRODUCT:
      return NNP_PROD;
    case c10d::ReduceOp::MIN:
      return NNP_MIN;
    case c10d::ReduceOp::MAX:
      return NNP_MAX;
    case c10d::ReduceOp::BAND:
      name = "BAND";
      break;
    case c10d::ReduceOp::BOR:
      name = "BOR";
      break;
    case c10d::ReduceOp::BXOR:
      name = "BXOR";
      break;
    case c10d::ReduceOp::PREMUL_SUM:
      name = "PREMUL_SUM";
      break;
    default:
      break;
  }
  TORCH_CHECK(
      false, "nnp: ", what, ": ReduceOp.", name,
      " is not supported (SUM, AVG, PRODUCT, MIN and MAX are)");
}

// The one tensor of @tensors: a process drives one device.
const at::Tensor& single(const std::vector<at::Tensor>& tensors, const char* op) {
  TORCH_CHECK(
      tensors.size() == 1, "nnp: ", op,
      " takes one tensor per rank (one device per process), not ",
      tensors.size());
  return tensors[0];
}

// @tensors all of @like's dtype and size, @count of them.
void checkLike(
    const std::vector<at::Tensor>& tensors,
    size_t count,
    const at::Tensor& like,
    const char* op) {
  TORCH_CHECK(
      tensors.size() == count, "nnp: ", op, ": ", count,
      " tensors (one per rank), not ", tensors.size());
  for (const at::Tensor& t : tensors) {
    checkDense(t, op);
    TORCH_CHECK(
        t.scalar_type() == like.scalar_type() && t.numel() == like.numel(),
        "nnp: ", op, ": every tensor of the list needs dtype ",
        like.scalar_type(), " and ", like.numel(), " elements");
  }
}

// @out of @in's dtype and @times its elements.
void checkSized(
    const at::Tensor& out,
    const at::Tensor& in,
    int64_t times,
    const char* op) {
  checkDense(in, op);
  checkDense(out, op);
  TORCH_CHECK(
      out.scalar_type() == in.scalar_type() && out.numel() == in.numel() * times,
      "nnp: ", op, ": the output needs the input's dtype and ", times,
      " times its ", in.numel(), " elements");
}

// The unique id (and so the job's secret) goes from rank 0 to the others
// through the group's c10d store: only the job's processes share it.
nnp_unique_id_t exchangeId(c10d::Store& store, int rank, nnp_unique_id_t id) {
  const uint8_t* bytes = reinterpret_cast<const uint8_t*>(&id);

  if (rank == 0) {
    store.set(kIdKey, std::vector<uint8_t>(bytes, bytes + sizeof(id)));
    return id;
  }
  std::vector<uint8_t> got = store.get(kIdKey);
  TORCH_CHECK(
      got.size() == sizeof(id), "nnp: the store's ", kIdKey, " has ",
      got.size(), " bytes, not ", sizeof(id));
  std::memcpy(&id, got.data(), sizeof(id));
  return id;
}

// The largest tensor that bounces: NNP_TORCH_BOUNCE_MAX bytes (0: none
// does, every tensor is registered), at most the bounce buffer's size.
size_t bounceMax() {
  const char* e = std::getenv("NNP_TORCH_BOUNCE_MAX");
  char* end;
  unsigned long long v;

  if (!e || !*e)
    return kBounceMaxDefault;
  v = std::strtoull(e, &end, 10);
  TORCH_CHECK(
      !*end && v <= kBounceBytes, "nnp: NNP_TORCH_BOUNCE_MAX=", e,
      " is not a number of bytes from 0 to ", kBounceBytes);
  return v;
}

// libnnp reads its timeouts from the environment when a communicator is
// made: the rendezvous's (NNP_COMM_TIMEOUT_S) and each wait for a peer
// (NNP_COLL_TIMEOUT_S). Both become @timeout, in whole seconds rounded up,
// which it returns.
long long setTimeouts(std::chrono::milliseconds timeout) {
  const long long ms = std::max<long long>(timeout.count(), 1);
  const long long seconds = (ms + 999) / 1000;
  const std::string s = std::to_string(seconds);

  setenv("NNP_COMM_TIMEOUT_S", s.c_str(), 1);
  setenv("NNP_COLL_TIMEOUT_S", s.c_str(), 1);
  return seconds;
}

} // namespace

// Where operations run: a stream with its own staging memory, and a
// thread that runs them in order, each to its end (run()). The
// collectives have one lane, so every rank runs them in the order its
// caller asked for them. Sends to a peer and receives from it have one
// each, so that a receive waiting for its message holds up no send nor
// any other receive, as gloo's operations wait for no other: a pipeline
// schedule posts its receives before its sends (batch_isend_irecv on
// CPU tensors runs them one by one), and messages between two ranks
// still arrive in the order sent.
struct NnpBackend::Lane {
  Handle<nnp_stream_t, nnp_stream_destroy> stream;
  // Device memory its operations stage through, grown to the largest
  // one's need.
  Handle<nnp_mem_t, nnp_mem_free> buffer;
  // Host memory small tensors are copied through (Staging), and its
  // mapping; tensors of at most bounce_max_ bytes use it.
  Handle<nnp_mem_t, nnp_mem_free> bounce;
  char* bounce_ptr = nullptr;

  std::mutex mutex;
  std::condition_variable queued;
  std::deque<std::pair<c10::intrusive_ptr<Work>, Job>> queue;
  bool stop = false;
  std::thread worker;
};

// The host side of one operation on a lane, each tensor's copy between it
// and the lane's staging buffer in device memory one of two ways. A small
// tensor goes through the lane's bounce buffer: host memory the device
// can reach, allocated once, a memcpy on this thread away from the
// tensor. A larger one is registered with the device (pinned) for its copy
// and unregistered once the stream is synchronized. Registering and
// unregistering are a round trip to the device each, which costs more than
// copying a small tensor (docs/torch.md, Staging). Made with the group's
// issue lock held (@issue), which only its waits let go of.
class NnpBackend::Staging {
 public:
  Staging(NnpBackend& pg, Lane& lane, std::unique_lock<std::mutex>& issue)
      : pg_(pg), lane_(lane), issue_(issue) {}
  ~Staging() {
    for (nnp_mem_t* m : registered_)
      nnp_mem_free(m);
  }

  nnp_stream_t* stream() const {
    return lane_.stream.get();
  }

  // The lane's device memory, of at least @bytes.
  nnp_mem_t* buffer(size_t bytes) {
    if (!lane_.buffer || nnp_mem_size(lane_.buffer.get()) < bytes) {
      nnp_mem_t* mem;

      lane_.buffer.reset();
      pg_.check(
          nnp_mem_alloc(pg_.dev_.get(), NNP_MEM_DEVICE, std::max<size_t>(bytes, 4096), 0, &mem),
          "allocating device memory to stage through");
      lane_.buffer.reset(mem);
    }
    return lane_.buffer.get();
  }

  // Queue the copy of @t to the buffer at @off, or back.
  void in(const at::Tensor& t, size_t off) {
    copy(t, off, true);
  }
  void out(const at::Tensor& t, size_t off) {
    copy(t, off, false);
  }

  // Waits for the operation, the issue lock let go meanwhile; a failure
  // (a link down, a peer past the timeout, the device lost) resets the
  // stream for the next one and throws with the device's reason, which
  // the last error gives with the failed command (nnp_stream_error()'s).
  // @mismatch, if given, says which arguments the ranks disagree on when
  // the device found that they called the operation differently.
  void synchronize(const char* what, const char* mismatch = nullptr) {
    const nnp_result_t result = wait();
    if (result == NNP_SUCCESS)
      return;
    std::string message = pg_.failure(result, what);
    if (result == NNP_ERROR_MISMATCH && mismatch)
      message += c10::str("; ", mismatch);
    struct nnp_stream_error err {};
    err.size = sizeof(err);
    // A command the device ended ABORTED because its communicator had
    // failed here before it began (a link lost between two operations,
    // hardware 1.23), or because the event thread aborted it on that
    // failure while the command was still queued, says nothing of why:
    // the device's event, on its way to the event thread, does. One aborted by another rank's failure
    // needs no more: its communicator failed "aborted" too.
    const bool failed = nnp_stream_error(stream(), &err) == NNP_ERROR_COMMAND_FAILED;
    if (failed && err.status == kStatusAborted) {
      const std::string why = pg_.commFailureWithin(std::chrono::seconds(1));
      if (!why.empty() && why != "aborted")
        message += c10::str("; its communicator failed (", why, ")");
    }
    // Said in so many words, as gloo's errors say it: callers look for them.
    if (failed && err.status == kStatusPeerTimeout)
      message += c10::str(
          "; timed out: no answer within the process group's timeout of ",
          pg_.timeout_s_, " s");
    nnp_stream_reset(stream());
    TORCH_CHECK(false, message);
  }

  // After a failure: nothing queued may use the registered memory once
  // it is freed.
  void drain() {
    if (wait() != NNP_SUCCESS)
      nnp_stream_reset(stream());
  }

  // After the job has synchronized: the bounced outputs into their
  // tensors (again, harmlessly, if the job did it to read one).
  void finish() {
    for (const Back& b : back_)
      std::memcpy(b.tensor.data_ptr(), lane_.bounce_ptr + b.off, b.tensor.nbytes());
  }

 private:
  struct Back {
    at::Tensor tensor;
    size_t off;
  };

  // The lane's stream synchronized, the issue lock let go meanwhile.
  nnp_result_t wait() {
    issue_.unlock();
    const nnp_result_t result = nnp_stream_synchronize(stream());
    issue_.lock();
    return result;
  }

  // The lane's bounce buffer, allocated at its first use and kept.
  nnp_mem_t* bounce() {
    if (!lane_.bounce) {
      nnp_mem_t* mem;
      void* ptr;

      pg_.check(
          nnp_mem_alloc(pg_.dev_.get(), NNP_MEM_HOST, kBounceBytes, 0, &mem),
          "allocating host memory to bounce small tensors through");
      lane_.bounce.reset(mem);
      pg_.check(nnp_mem_map(mem, &ptr), "mapping the bounce buffer");
      lane_.bounce_ptr = static_cast<char*>(ptr);
    }
    return lane_.bounce.get();
  }

  void copy(const at::Tensor& t, size_t off, bool in) {
    const size_t len = t.nbytes();
    const size_t room = (len + kBounceAlign - 1) & ~(kBounceAlign - 1);
    nnp_mem_t* buf = lane_.buffer.get();
    nnp_mem_t* host;
    size_t host_off = 0;

    if (!len)
      return;
    if (len <= pg_.bounce_max_ && bounced_ + room <= kBounceBytes) {
      host = bounce();
      host_off = bounced_;
      bounced_ += room;
      if (in)
        std::memcpy(lane_.bounce_ptr + host_off, t.data_ptr(), len);
      else
        back_.push_back({t, host_off});
    } else {
      pg_.check(
          nnp_mem_register(pg_.dev_.get(), t.data_ptr(), len, 0, &host),
          "registering a tensor's memory");
      registered_.push_back(host);
    }
    pg_.check(
        in ? nnp_memcpy_async(stream(), buf, off, host, host_off, len)
           : nnp_memcpy_async(stream(), host, host_off, buf, off, len),
        in ? "the copy to the device" : "the copy from the device");
  }

  NnpBackend& pg_;
  Lane& lane_;
  std::unique_lock<std::mutex>& issue_;
  std::vector<nnp_mem_t*> registered_;
  size_t bounced_ = 0;		// bytes of the bounce buffer this operation uses
  std::vector<Back> back_;
};

NnpBackend::NnpBackend(
    const c10::intrusive_ptr<c10d::Store>& store,
    int rank,
    int size,
    std::chrono::milliseconds timeout,
    int device)
    : BackendBase(rank, size), device_(device) {
  nnp_device_t* dev;
  nnp_comm_t* comm;
  nnp_unique_id_t id{};

  check(nnp_device_open(device, &dev), "opening the device");
  dev_.reset(dev);
  timeout_s_ = setTimeouts(timeout);
  bounce_max_ = bounceMax();
  if (rank == 0)
    check(nnp_get_unique_id(&id), "making the job's unique id");
  id = exchangeId(*store, rank, id);
  check(nnp_comm_init_rank(&comm, size, &id, rank, dev), "making the communicator");
  comm_.reset(comm);
  comm_id_ = nnp_comm_id(comm);
  events_ = std::make_unique<EventWatch>(
      dev, [this](const nnp_device_event& ev) { onEvent(ev); });
  main_ = std::make_unique<Lane>();
  startLane(*main_);
}

// Torch drops a group from Python with the GIL held, and a lane's thread
// may then hold the last reference to a tensor Python made (an isend's,
// say, whose Work and tensor the caller let go), whose freeing takes the
// GIL: the lanes are joined with it let go, or both would wait forever.
NnpBackend::~NnpBackend() {
  if (Py_IsInitialized() && PyGILState_Check()) {
    pybind11::gil_scoped_release nogil;
    stopLanes();
  } else {
    stopLanes();
  }
  events_.reset();
}

// The device told us the group's communicator failed, or that the device
// was reset: nothing the group runs from now on can succeed. Later calls
// raise at once, naming why, and so do operations queued but not begun.
// A failed communicator is aborted as well (ncclCommAbort's part in
// NCCL's watchdog), which ends any wait on it that is still going: the
// device ends a failed communicator's commands itself, and this makes
// sure. The issue lock keeps it from a lane's libnnp calls, which take
// the communicator only while they hold it.
void NnpBackend::onEvent(const nnp_device_event& ev) {
  std::string why;
  const bool failed = ev.kind == NNP_DEVICE_EVENT_COMM_FAILED && ev.comm_id == comm_id_;

  if (failed)
    why = c10::str("its communicator failed (", ev.why, ")");
  else if (ev.kind == NNP_DEVICE_EVENT_RESET)
    why = c10::str("the device was reset (", ev.reset_reason, ")");
  else
    return;
  {
    std::lock_guard<std::mutex> lock(broken_mutex_);
    if (failed && comm_failure_.empty()) {
      comm_failure_ = ev.why;
      comm_failed_.notify_all();
    }
    if (!broken_.empty())
      return;
    broken_ = why;
  }
  if (ev.kind == NNP_DEVICE_EVENT_COMM_FAILED)
    abortComm();
}

// Ends the communicator at once, if it is not ended yet: the device ends
// its commands here and tells every other rank, whose own then fail.
void NnpBackend::abortComm() {
  std::lock_guard<std::mutex> issue(issue_);
  if (comm_)
    nnp_comm_abort(comm_.release());
}

void NnpBackend::abort() {
  {
    std::lock_guard<std::mutex> lock(broken_mutex_);
    if (broken_.empty())
      broken_ = "this process aborted it (torch_nnp.abort())";
  }
  abortComm();
}

// Raises if a device event said the group can run nothing more.
void NnpBackend::checkUsable() const {
  std::lock_guard<std::mutex> lock(broken_mutex_);
  TORCH_CHECK(
      broken_.empty(), "nnp: device ", device_, " (rank ", rank_, " of ", size_,
      ") runs no more operations: ", broken_, "; make a new process group to go on");
}

// Why the group's communicator failed ("link_down", ...), once its
// device event says within @bound; empty if none did.
std::string NnpBackend::commFailureWithin(std::chrono::milliseconds bound) const {
  std::unique_lock<std::mutex> lock(broken_mutex_);
  comm_failed_.wait_for(lock, bound, [this] { return !comm_failure_.empty(); });
  return comm_failure_;
}

// Every lane's thread, once it has run what was queued to it.
void NnpBackend::stopLanes() {
  std::vector<Lane*> lanes{main_.get()};

  for (auto& [key, lane] : p2p_)
    lanes.push_back(lane.get());
  for (Lane* lane : lanes) {
    {
      std::lock_guard<std::mutex> lock(lane->mutex);
      lane->stop = true;
    }
    lane->queued.notify_one();
  }
  for (Lane* lane : lanes)
    lane->worker.join();
}

// @lane's stream, and its thread.
void NnpBackend::startLane(Lane& lane) {
  nnp_stream_t* stream;

  {
    std::lock_guard<std::mutex> issue(issue_);
    check(nnp_stream_create(dev_.get(), &stream), "creating a stream");
  }
  lane.stream.reset(stream);
  lane.worker = std::thread(&NnpBackend::run, this, std::ref(lane));
}

NnpBackend::Lane& NnpBackend::p2pLane(int peer, bool recv) {
  std::lock_guard<std::mutex> lock(lanes_mutex_);
  std::unique_ptr<Lane>& lane = p2p_[{peer, recv ? 1 : 0}];

  if (!lane) {
    auto made = std::make_unique<Lane>();
    startLane(*made);
    lane = std::move(made);
  }
  return *lane;
}

// libnnp's result and this thread's last error, naming the device.
std::string NnpBackend::failure(nnp_result_t result, const char* what) const {
  return c10::str(
      "nnp: ", what, " failed on device ", device_, " (rank ", rank_, " of ",
      size_, "): ", nnp_strerror(result), ": ", nnp_get_last_error());
}

void NnpBackend::check(nnp_result_t result, const char* what) const {
  TORCH_CHECK(result == NNP_SUCCESS, failure(result, what));
}

c10::intrusive_ptr<c10d::Work> NnpBackend::enqueue(
    c10d::OpType type,
    std::vector<at::Tensor> outputs,
    Job job) {
  auto work = enqueue(*main_, type, std::move(outputs), std::move(job));
  collectives_++;
  return work;
}

// Every rank counts its collectives from 0 (NCCL's start too): the
// group's ranks agree on the count as long as they call alike.
void NnpBackend::setSequenceNumberForGroup() {
  collectives_ = 0;
}

uint64_t NnpBackend::getSequenceNumberForGroup() {
  return collectives_;
}

c10::intrusive_ptr<c10d::Work> NnpBackend::enqueue(
    Lane& lane,
    c10d::OpType type,
    std::vector<at::Tensor> outputs,
    Job job,
    std::shared_ptr<int> source) {
  checkUsable();
  auto work = c10::make_intrusive<Work>(
      rank_, type, std::move(outputs), std::move(source));
  {
    std::lock_guard<std::mutex> lock(lane.mutex);
    lane.queue.emplace_back(work, std::move(job));
  }
  lane.queued.notify_one();
  return work;
}

// A lane's thread: its queued operations in order, each to its end.
void NnpBackend::run(Lane& lane) {
  for (;;) {
    std::unique_lock<std::mutex> lock(lane.mutex);
    lane.queued.wait(lock, [&lane] { return lane.stop || !lane.queue.empty(); });
    if (lane.queue.empty())
      return;
    auto [work, job] = std::move(lane.queue.front());
    lane.queue.pop_front();
    lock.unlock();

    std::exception_ptr error;
    {
      std::unique_lock<std::mutex> issue(issue_);
      Staging staging(*this, lane, issue);
      try {
        checkUsable();
        job(staging);
        staging.finish();
      } catch (...) {
        error = std::current_exception();
        staging.drain();
      }
    }
    work->complete(error);
  }
}

c10::intrusive_ptr<c10d::Work> NnpBackend::allreduce(
    std::vector<at::Tensor>& tensors,
    const c10d::AllreduceOptions& opts) {
  const at::Tensor t = single(tensors, "allreduce");
  const nnp_dtype_t dtype = dtypeOf(t, "allreduce");
  const nnp_redop_t op = redopOf(opts.reduceOp, "allreduce");

  return enqueue(c10d::OpType::ALLREDUCE, {t}, [=](Staging& s) {
    nnp_mem_t* b = s.buffer(t.nbytes());
    s.in(t, 0);
    check(
        nnp_allreduce(b, 0, b, 0, t.numel(), dtype, op, comm_.get(), s.stream()),
        "allreduce");
    s.out(t, 0);
    s.synchronize("allreduce");
  });
}

// One allreduce over the tensors laid end to end in the buffer.
c10::intrusive_ptr<c10d::Work> NnpBackend::allreduce_coalesced(
    std::vector<at::Tensor>& tensors,
    const c10d::AllreduceCoalescedOptions& opts) {
  const char* what = "allreduce_coalesced";
  TORCH_CHECK(!tensors.empty(), "nnp: ", what, ": no tensors");
  const nnp_dtype_t dtype = dtypeOf(tensors[0], what);
  const nnp_redop_t op = redopOf(opts.reduceOp, what);
  size_t count = 0;
  for (const at::Tensor& t : tensors) {
    TORCH_CHECK(
        dtypeOf(t, what) == dtype, "nnp: ", what,
        ": the tensors need one dtype, not ", tensors[0].scalar_type(),
        " and ", t.scalar_type());
    count += t.numel();
  }

  return enqueue(c10d::OpType::ALLREDUCE_COALESCED, tensors, [=](Staging& s) {
    nnp_mem_t* b = s.buffer(count * tensors[0].element_size());
    size_t off = 0;
    for (const at::Tensor& t : tensors) {
      s.in(t, off);
      off += t.nbytes();
    }
    check(nnp_allreduce(b, 0, b, 0, count, dtype, op, comm_.get(), s.stream()), what);
    off = 0;
    for (const at::Tensor& t : tensors) {
      s.out(t, off);
      off += t.nbytes();
    }
    s.synchronize(what);
  });
}

c10::intrusive_ptr<c10d::Work> NnpBackend::broadcast(
    std::vector<at::Tensor>& tensors,
    const c10d::BroadcastOptions& opts) {
  const at::Tensor t = single(tensors, "broadcast");
  checkDense(t, "broadcast");
  const int root = static_cast<int>(opts.rootRank);

  return enqueue(c10d::OpType::BROADCAST, {t}, [=](Staging& s) {
    nnp_mem_t* b = s.buffer(t.nbytes());
    if (rank_ == root)
      s.in(t, 0);
    check(
        nnp_broadcast(b, 0, b, 0, t.nbytes(), NNP_UINT8, root, comm_.get(), s.stream()),
        "broadcast");
    if (rank_ != root)
      s.out(t, 0);
    s.synchronize("broadcast");
  });
}

c10::intrusive_ptr<c10d::Work> NnpBackend::allgather(
    std::vector<std::vector<at::Tensor>>& outputs,
    std::vector<at::Tensor>& inputs,
    const c10d::AllgatherOptions& /* opts */) {
  const at::Tensor in = single(inputs, "allgather");
  checkDense(in, "allgather");
  TORCH_CHECK(outputs.size() == 1, "nnp: allgather takes one output list");
  const std::vector<at::Tensor> outs = outputs[0];
  checkLike(outs, size_, in, "allgather");

  return enqueue(c10d::OpType::ALLGATHER, outs, [=](Staging& s) {
    const size_t len = in.nbytes();
    gatherAll(s, {in});
    for (size_t r = 0; r < outs.size(); r++)
      s.out(outs[r], len * (r + 1));
    s.synchronize("allgather");
  });
}

c10::intrusive_ptr<c10d::Work> NnpBackend::_allgather_base(
    at::Tensor& output,
    at::Tensor& input,
    const c10d::AllgatherOptions& /* opts */) {
  const char* what = "all_gather_into_tensor";
  checkSized(output, input, size_, what);
  const at::Tensor in = input, out = output;

  return enqueue(c10d::OpType::_ALLGATHER_BASE, {out}, [=](Staging& s) {
    gatherAll(s, {in});
    s.out(out, in.nbytes());
    s.synchronize(what);
  });
}

// One allgather of @inputs: the buffer holds them end to end from 0,
// their bytes L in all, and rank r's L bytes at L * (r + 1), each input
// at its own offset there. Returns L.
size_t NnpBackend::gatherAll(Staging& s, const std::vector<at::Tensor>& inputs) {
  size_t len = 0;

  for (const at::Tensor& t : inputs)
    len += t.nbytes();
  nnp_mem_t* b = s.buffer(len * (size_ + 1));
  size_t off = 0;
  for (const at::Tensor& t : inputs) {
    s.in(t, off);
    off += t.nbytes();
  }
  check(
      nnp_allgather(b, 0, b, len, len, NNP_UINT8, comm_.get(), s.stream()),
      "allgather");
  return len;
}

// all_gather_coalesced: outputs[r][i] is rank r's inputs[i], as gloo and
// torch's own tests take it (one list per rank).
c10::intrusive_ptr<c10d::Work> NnpBackend::allgather_coalesced(
    std::vector<std::vector<at::Tensor>>& outputs,
    std::vector<at::Tensor>& inputs,
    const c10d::AllgatherOptions& /* opts */) {
  const char* what = "all_gather_coalesced";
  std::vector<at::Tensor> flat;
  TORCH_CHECK(
      outputs.size() == static_cast<size_t>(size_), "nnp: ", what, ": ",
      size_, " output lists (one per rank), not ", outputs.size());
  for (const at::Tensor& in : inputs)
    checkDense(in, what);
  for (int r = 0; r < size_; r++) {
    TORCH_CHECK(
        outputs[r].size() == inputs.size(), "nnp: ", what, ": output list ", r,
        " has ", outputs[r].size(), " tensors for ", inputs.size(), " inputs");
    for (size_t i = 0; i < inputs.size(); i++)
      checkLike({outputs[r][i]}, 1, inputs[i], what);
    flat.insert(flat.end(), outputs[r].begin(), outputs[r].end());
  }
  const std::vector<at::Tensor> ins = inputs;
  const std::vector<std::vector<at::Tensor>> outs = outputs;

  return enqueue(c10d::OpType::ALLGATHER_COALESCED, flat, [=](Staging& s) {
    const size_t len = gatherAll(s, ins);
    for (int r = 0; r < size_; r++) {
      size_t off = 0;
      for (size_t i = 0; i < ins.size(); i++) {
        s.out(outs[r][i], len * (r + 1) + off);
        off += ins[i].nbytes();
      }
    }
    s.synchronize(what);
  });
}

#if TORCH_VERSION_MAJOR >= 2
// all_gather_into_tensor calls coalesced (torch 2.x): one allgather, and
// part r of outputs[i] is rank r's inputs[i].
c10::intrusive_ptr<c10d::Work> NnpBackend::allgather_into_tensor_coalesced(
    std::vector<at::Tensor>& outputs,
    std::vector<at::Tensor>& inputs,
    const c10d::AllgatherOptions& /* opts */) {
  const char* what = "all_gather_into_tensor_coalesced";
  TORCH_CHECK(
      outputs.size() == inputs.size(), "nnp: ", what, ": ", outputs.size(),
      " outputs for ", inputs.size(), " inputs");
  for (size_t i = 0; i < inputs.size(); i++)
    checkSized(outputs[i], inputs[i], size_, what);
  const std::vector<at::Tensor> ins = inputs, outs = outputs;

  return enqueue(c10d::OpType::COALESCED, outs, [=](Staging& s) {
    const size_t len = gatherAll(s, ins);
    size_t off = 0;
    for (size_t i = 0; i < ins.size(); i++) {
      const at::Tensor flat = outs[i].view(-1);
      const int64_t n = ins[i].numel();
      for (int r = 0; r < size_; r++)
        s.out(flat.narrow(0, n * r, n), len * (r + 1) + off);
      off += ins[i].nbytes();
    }
    s.synchronize(what);
  });
}

// reduce_scatter_tensor calls coalesced (torch 2.x): each pair's
// reduce-scatter in turn on the stream, one wait for them all.
c10::intrusive_ptr<c10d::Work> NnpBackend::reduce_scatter_tensor_coalesced(
    std::vector<at::Tensor>& outputs,
    std::vector<at::Tensor>& inputs,
    const c10d::ReduceScatterOptions& opts) {
  const char* what = "reduce_scatter_tensor_coalesced";
  const nnp_redop_t op = redopOf(opts.reduceOp, what);
  std::vector<nnp_dtype_t> dtypes;
  size_t total = 0;
  TORCH_CHECK(
      outputs.size() == inputs.size(), "nnp: ", what, ": ", outputs.size(),
      " outputs for ", inputs.size(), " inputs");
  for (size_t i = 0; i < inputs.size(); i++) {
    dtypes.push_back(dtypeOf(outputs[i], what));
    checkSized(inputs[i], outputs[i], size_, what);
    total += inputs[i].nbytes() + outputs[i].nbytes();
  }
  const std::vector<at::Tensor> ins = inputs, outs = outputs;

  return enqueue(c10d::OpType::COALESCED, outs, [=](Staging& s) {
    nnp_mem_t* b = s.buffer(total);
    size_t off = 0;
    for (size_t i = 0; i < ins.size(); i++) {
      const size_t at = off + ins[i].nbytes();
      s.in(ins[i], off);
      check(
          nnp_reduce_scatter(b, off, b, at, outs[i].numel(), dtypes[i], op,
                             comm_.get(), s.stream()),
          "reduce_scatter");
      s.out(outs[i], at);
      off = at + outs[i].nbytes();
    }
    s.synchronize(what);
  });
}
#endif

// The buffer holds every rank's part of the input from 0 and this rank's
// reduced part after them.
void NnpBackend::scatter(Staging& s, nnp_redop_t op, const at::Tensor& output) {
  const size_t at = output.nbytes() * size_;
  nnp_mem_t* b = s.buffer(at + output.nbytes());

  check(
      nnp_reduce_scatter(b, 0, b, at, output.numel(), dtypeOf(output, "reduce_scatter"),
                         op, comm_.get(), s.stream()),
      "reduce_scatter");
  s.out(output, at);
}

c10::intrusive_ptr<c10d::Work> NnpBackend::reduce_scatter(
    std::vector<at::Tensor>& outputs,
    std::vector<std::vector<at::Tensor>>& inputs,
    const c10d::ReduceScatterOptions& opts) {
  const at::Tensor out = single(outputs, "reduce_scatter");
  dtypeOf(out, "reduce_scatter");
  const nnp_redop_t op = redopOf(opts.reduceOp, "reduce_scatter");
  TORCH_CHECK(inputs.size() == 1, "nnp: reduce_scatter takes one input list");
  const std::vector<at::Tensor> ins = inputs[0];
  checkLike(ins, size_, out, "reduce_scatter");

  return enqueue(c10d::OpType::REDUCE_SCATTER, {out}, [=](Staging& s) {
    const size_t len = out.nbytes();
    s.buffer(len * (size_ + 1));
    for (size_t r = 0; r < ins.size(); r++)
      s.in(ins[r], len * r);
    scatter(s, op, out);
    s.synchronize("reduce_scatter");
  });
}

c10::intrusive_ptr<c10d::Work> NnpBackend::_reduce_scatter_base(
    at::Tensor& output,
    at::Tensor& input,
    const c10d::ReduceScatterOptions& opts) {
  const char* what = "reduce_scatter_tensor";
  TORCH_CHECK(
      dtypeOf(output, what) == dtypeOf(input, what) &&
          input.numel() == output.numel() * size_,
      "nnp: ", what, ": the input needs the output's dtype and ", size_,
      " times its ", output.numel(), " elements");
  const nnp_redop_t op = redopOf(opts.reduceOp, what);
  const at::Tensor in = input, out = output;

  return enqueue(c10d::OpType::_REDUCE_SCATTER_BASE, {out}, [=](Staging& s) {
    s.buffer(out.nbytes() * (size_ + 1));
    s.in(in, 0);
    scatter(s, op, out);
    s.synchronize(what);
  });
}

// The buffer holds the input at 0 and, on the root, the result after it.
c10::intrusive_ptr<c10d::Work> NnpBackend::reduce(
    std::vector<at::Tensor>& tensors,
    const c10d::ReduceOptions& opts) {
  const at::Tensor t = single(tensors, "reduce");
  const nnp_dtype_t dtype = dtypeOf(t, "reduce");
  const nnp_redop_t op = redopOf(opts.reduceOp, "reduce");
  const int root = static_cast<int>(opts.rootRank);

  return enqueue(c10d::OpType::REDUCE, {t}, [=](Staging& s) {
    const size_t len = t.nbytes();
    nnp_mem_t* b = s.buffer(2 * len);
    s.in(t, 0);
    check(
        nnp_reduce(b, 0, rank_ == root ? b : nullptr, len, t.numel(), dtype, op,
                   root, comm_.get(), s.stream()),
        "reduce");
    if (rank_ == root)
      s.out(t, len);
    s.synchronize("reduce");
  });
}

// The buffer holds the input at 0 and, on the root, every rank's after it.
c10::intrusive_ptr<c10d::Work> NnpBackend::gather(
    std::vector<std::vector<at::Tensor>>& outputs,
    std::vector<at::Tensor>& inputs,
    const c10d::GatherOptions& opts) {
  const at::Tensor in = single(inputs, "gather");
  checkDense(in, "gather");
  const int root = static_cast<int>(opts.rootRank);
  std::vector<at::Tensor> outs;
  if (rank_ == root) {
    TORCH_CHECK(outputs.size() == 1, "nnp: gather takes one output list on the root");
    outs = outputs[0];
    checkLike(outs, size_, in, "gather");
  }

  return enqueue(c10d::OpType::GATHER, outs, [=](Staging& s) {
    const size_t len = in.nbytes();
    nnp_mem_t* b = s.buffer(len * (size_ + 1));
    s.in(in, 0);
    check(
        nnp_gather(b, 0, rank_ == root ? b : nullptr, len, len, NNP_UINT8, root,
                   comm_.get(), s.stream()),
        "gather");
    for (size_t r = 0; r < outs.size(); r++)
      s.out(outs[r], len * (r + 1));
    s.synchronize("gather");
  });
}

// The buffer holds, on the root, every rank's part from 0; the rank's own
// part after them.
c10::intrusive_ptr<c10d::Work> NnpBackend::scatter(
    std::vector<at::Tensor>& outputs,
    std::vector<std::vector<at::Tensor>>& inputs,
    const c10d::ScatterOptions& opts) {
  const at::Tensor out = single(outputs, "scatter");
  checkDense(out, "scatter");
  const int root = static_cast<int>(opts.rootRank);
  std::vector<at::Tensor> ins;
  if (rank_ == root) {
    TORCH_CHECK(inputs.size() == 1, "nnp: scatter takes one input list on the root");
    ins = inputs[0];
    checkLike(ins, size_, out, "scatter");
  }

  return enqueue(c10d::OpType::SCATTER, {out}, [=](Staging& s) {
    const size_t len = out.nbytes(), at = len * size_;
    nnp_mem_t* b = s.buffer(at + len);
    for (size_t r = 0; r < ins.size(); r++)
      s.in(ins[r], len * r);
    check(
        nnp_scatter(rank_ == root ? b : nullptr, 0, b, at, len, NNP_UINT8, root,
                    comm_.get(), s.stream()),
        "scatter");
    s.out(out, at);
    s.synchronize("scatter");
  });
}

// Bytes of each rank's part of @t, from @splits (rows of dim 0; none:
// equal parts), and where each starts.
static void partsOf(const at::Tensor& t, const std::vector<int64_t>& splits, int size,
                    const char* what, std::vector<size_t>& counts,
                    std::vector<size_t>& displs) {
  const int64_t rows = t.dim() ? t.size(0) : 1;
  const size_t row = rows ? t.nbytes() / static_cast<size_t>(rows) : 0;
  int64_t sum = 0;

  TORCH_CHECK(
      splits.empty() || splits.size() == static_cast<size_t>(size), "nnp: ", what, ": ",
      splits.size(), " splits for ", size, " ranks");
  TORCH_CHECK(
      !splits.empty() || rows % size == 0, "nnp: ", what, ": ", rows,
      " rows do not split evenly over ", size, " ranks");
  counts.assign(size, 0);
  displs.assign(size, 0);
  for (int r = 0; r < size; r++) {
    const int64_t n = splits.empty() ? rows / size : splits[r];
    TORCH_CHECK(n >= 0, "nnp: ", what, ": split ", r, " is negative");
    displs[r] = static_cast<size_t>(sum) * row;
    counts[r] = static_cast<size_t>(n) * row;
    sum += n;
  }
  TORCH_CHECK(sum == rows, "nnp: ", what, ": the splits add up to ", sum, ", not ", rows);
}

// all_to_all_single: equal parts with one ALLTOALL command, uneven ones
// with nnp_alltoallv (a group of messages).
c10::intrusive_ptr<c10d::Work> NnpBackend::alltoall_base(
    at::Tensor& output,
    at::Tensor& input,
    std::vector<int64_t>& outputSplits,
    std::vector<int64_t>& inputSplits,
    const c10d::AllToAllOptions& /* opts */) {
  const char* what = "all_to_all_single";
  std::vector<size_t> sc, sd, rc, rd;
  checkDense(input, what);
  checkDense(output, what);
  TORCH_CHECK(
      output.scalar_type() == input.scalar_type(), "nnp: ", what,
      ": the output needs the input's dtype");
  partsOf(input, inputSplits, size_, what, sc, sd);
  partsOf(output, outputSplits, size_, what, rc, rd);
  const bool even = inputSplits.empty() && outputSplits.empty() &&
                    input.numel() == output.numel();
  const at::Tensor in = input, out = output;

  return enqueue(c10d::OpType::ALLTOALL_BASE, {out}, [=](Staging& s) {
    const size_t len = in.nbytes();
    nnp_mem_t* b = s.buffer(len + out.nbytes());
    s.in(in, 0);
    check(
        even ? nnp_alltoall(b, 0, b, len, len / size_, NNP_UINT8, comm_.get(),
                            s.stream())
             : nnp_alltoallv(b, 0, sc.data(), sd.data(), b, len, rc.data(), rd.data(),
                             NNP_UINT8, comm_.get(), s.stream()),
        what);
    s.out(out, len);
    s.synchronize(
        what,
        even ? nullptr
             : "the ranks' split sizes disagree: this rank's output_split_sizes "
               "and the sender's input_split_sizes name other rows for the pair");
  });
}

c10::intrusive_ptr<c10d::Work> NnpBackend::alltoall(
    std::vector<at::Tensor>& outputs,
    std::vector<at::Tensor>& inputs,
    const c10d::AllToAllOptions& /* opts */) {
  const char* what = "all_to_all";
  TORCH_CHECK(!inputs.empty(), "nnp: ", what, ": no tensors");
  checkLike(inputs, size_, inputs[0], what);
  checkLike(outputs, size_, inputs[0], what);
  const std::vector<at::Tensor> ins = inputs, outs = outputs;

  return enqueue(c10d::OpType::ALLTOALL, outs, [=](Staging& s) {
    const size_t len = ins[0].nbytes(), all = len * size_;
    nnp_mem_t* b = s.buffer(2 * all);
    for (size_t r = 0; r < ins.size(); r++)
      s.in(ins[r], len * r);
    check(
        nnp_alltoall(b, 0, b, all, len, NNP_UINT8, comm_.get(), s.stream()),
        what);
    for (size_t r = 0; r < outs.size(); r++)
      s.out(outs[r], all + len * r);
    s.synchronize(what);
  });
}

// An allreduce of one word: no rank passes it before all have reached it.
c10::intrusive_ptr<c10d::Work> NnpBackend::barrier(
    const c10d::BarrierOptions& /* opts */) {
  return enqueue(c10d::OpType::BARRIER, {}, [this](Staging& s) {
    nnp_mem_t* b = s.buffer(sizeof(int32_t));
    check(
        nnp_allreduce(b, 0, b, 0, 1, NNP_INT32, NNP_SUM, comm_.get(), s.stream()),
        "barrier");
    s.synchronize("barrier");
  });
}

// A message's tag travels after its tensor's bytes. nnp's messages
// between two ranks are taken in the order sent, not by tag (as NCCL's,
// which ignore tags): a receive checks that the message it took has its
// tag, so a schedule posted out of order fails there, naming both tags,
// instead of taking another's tensor. The tag is copied with the tensor,
// one small copy each way.
constexpr size_t kTagBytes = sizeof(int32_t);

static at::Tensor tagTensor(int tag) {
  return at::full({1}, tag, at::kInt);
}

// After a receive from rank @src synchronized, with @got the tag its
// message came with; its tensor holds the message either way.
static void checkTag(const at::Tensor& got, int tag, int src, const char* op) {
  const int32_t sent = got.item<int32_t>();
  TORCH_CHECK(
      sent == tag, "nnp: ", op, ": the message from rank ", src, " has tag ",
      sent, ", the receive tag ", tag,
      " (nnp takes the messages between two ranks in the order sent, and checks their tags)");
}

// A peer is a rank of the group: it names a lane, made at its first use,
// so one out of range is refused here rather than by the device.
void NnpBackend::checkPeer(int peer, const char* op) const {
  TORCH_CHECK(
      peer >= 0 && peer < size_, "nnp: ", op, ": rank ", peer,
      " is not in the group of ", size_);
}

c10::intrusive_ptr<c10d::Work> NnpBackend::send(
    std::vector<at::Tensor>& tensors,
    int dst,
    int tag) {
  const at::Tensor t = single(tensors, "send");
  checkDense(t, "send");
  checkPeer(dst, "send");
  const at::Tensor sent = tagTensor(tag);

  return enqueue(p2pLane(dst, false), c10d::OpType::SEND, {}, [=](Staging& s) {
    const size_t len = t.nbytes() + kTagBytes;
    nnp_mem_t* b = s.buffer(len);
    s.in(t, 0);
    s.in(sent, t.nbytes());
    check(nnp_send(b, 0, len, NNP_UINT8, dst, comm_.get(), s.stream()), "send");
    s.synchronize("send");
  });
}

c10::intrusive_ptr<c10d::Work> NnpBackend::recv(
    std::vector<at::Tensor>& tensors,
    int src,
    int tag) {
  const at::Tensor t = single(tensors, "recv");
  checkDense(t, "recv");
  checkPeer(src, "recv");
  const at::Tensor got = tagTensor(0);

  return enqueue(p2pLane(src, true), c10d::OpType::RECV, {t}, [=](Staging& s) {
    const size_t len = t.nbytes() + kTagBytes;
    nnp_mem_t* b = s.buffer(len);
    check(nnp_recv(b, 0, len, NNP_UINT8, src, comm_.get(), s.stream()), "recv");
    s.out(t, 0);
    s.out(got, t.nbytes());
    s.synchronize("recv");
    s.finish();
    checkTag(got, tag, src, "recv");
  });
}

// The device takes whichever message for this rank comes first and says
// from whom; a receive naming its peer that started first keeps its own.
c10::intrusive_ptr<c10d::Work> NnpBackend::recvAnysource(
    std::vector<at::Tensor>& tensors,
    int tag) {
  const at::Tensor t = single(tensors, "recv");
  checkDense(t, "recv");
  auto source = std::make_shared<int>(-1);
  const at::Tensor got = tagTensor(0);

  return enqueue(
      p2pLane(-1, true),
      c10d::OpType::RECVANYSOURCE,
      {t},
      [=](Staging& s) {
        const size_t len = t.nbytes() + kTagBytes;
        nnp_mem_t* b = s.buffer(len);
        check(
            nnp_recv_any(b, 0, len, NNP_UINT8, source.get(), comm_.get(), s.stream()),
            "recv from any source");
        s.out(t, 0);
        s.out(got, t.nbytes());
        s.synchronize("recv from any source");
        s.finish();
        checkTag(got, tag, *source, "recv from any source");
      },
      source);
}

} // namespace nnp_torch
