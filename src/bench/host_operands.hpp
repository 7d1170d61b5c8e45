// What the jobs on page-locked host operands share (the out-of-core job, bench --out-of-core;
// the distributed job, bench --gpus): a shape's A, B and C in host memory, filled with the
// harness's random values (a shape and seed give the values the harness gives them); the
// sampled check of C made once per shape, before any run writes C; and the loop that runs a
// piece of work once to check C, then times it. Each job keeps what is its own: its runs, its
// models and its records' figures.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "bench/harness.hpp"
#include "core/executor.hpp"
#include "core/reference.hpp"
#include "gemmlab/tolerance.hpp"
#include "gemmlab/variant.hpp"

namespace gemmlab::bench {

// InvalidValue where the jobs on host operands cannot take the run's types (`job`: the flag
// that asked for the job, "--out-of-core"): options.out_dtype other than float32 (they fill,
// check and restore C as float32), or FP8 inputs (the library's out-of-core and distributed
// GEMMs refuse them: their block products carry no per-tensor scales).
Status check_host_job_types(const Options& options, std::string_view job);

// A matrix's buffer in bytes, in its storage type.
std::uint64_t matrix_bytes(const Matrix& x);

// What a shape's operands take in host memory (A, B and C in their storage types).
std::uint64_t host_operand_bytes(const Options& options, const Shape& shape);

// AllocFailed, saying what is needed and what is available, where the host cannot hold a
// shape's operands page-locked and leave a tenth of its available memory to everything else.
Status check_host_memory(const Options& options, const Shape& shape);

// One shape's operands in page-locked host memory: what the runs read (or upload from), and
// what every result ends in and is checked in.
struct HostProblem {
  std::unique_ptr<Buffer> a, b, c;
  GemmProblem problem;  // pointing at them
  std::uint64_t seed = 0;
  // C as every run must find it: its random values (beta != 0) or NaN (beta = 0: not read, and
  // an element still NaN afterwards was never written).
  void reset_c() const;
};

// Allocates the shape's operands page-locked and fills them, on every core (AllocFailed where
// the host will not lock them).
Status make_host_problem(const Options& options, Executor& executor, const Shape& shape, std::uint64_t seed,
                         HostProblem& out);

// The sampled check of a shape and its float64 reference.
struct SampledCheck {
  SamplePositions positions;
  ReferenceResult reference;
  std::string note;  // for the record: what was checked, and why not all of C
};

// Nothing where !options.verify. `operands` names what is too large for a full reference in
// the note ("host operands", "problems").
Status make_sampled_check(const Options& options, const HostProblem& host, std::string_view operands,
                          SampledCheck& out);

// A record of a job's run on the shape: its fields but the result's and the job's own.
Record host_record(const Options& options, const Shape& shape, const std::string& name, const std::string& technique);

// What one run does besides its own work.
struct HostCalls {
  std::function<Status()> call;            // the work, checked once and then timed
  std::function<Status()> set_up_check;    // before the checked call: C as the problem starts
  std::function<Status()> result_to_host;  // after it: C's result in the host problem's C (empty: there already)
  std::function<Status()> restore_c;       // before each timed call, where beta != 0 (C is read)
  std::function<void()> after_timed_call;  // after each timed call (empty: nothing)
  // The rung's error bound, asked once the checked call has run (empty, or absent: the types' own).
  std::function<std::optional<Tolerance>()> tolerance;
  // The work waits for its own completion (on host operands, or on every GPU): timed by the
  // host's clock; otherwise by CUDA events on the timer's stream.
  bool blocking = true;
  // C restored before each warm-up call too, where beta != 0 (the distributed job's runs).
  bool restore_c_for_warmup = false;
};

// Work on the host problem's own operands (C in host memory): C reset before the checked call
// and before each timed one that reads it.
HostCalls host_operand_calls(const HostProblem& host, std::function<Status()> call);

// Device copies of a host problem's operands, for an in-core rung.
struct DeviceCopies {
  std::unique_ptr<Buffer> a, b, c;
  std::unique_ptr<Buffer> c_initial;  // beta != 0: C's initial values, which every call reads
  GemmProblem problem;                // the host problem, pointing at a, b and c
};

// Allocates the copies on `executor`'s device and uploads A and B (and C's initial values where
// beta != 0); C itself is uploaded by the check's set-up.
Status copy_to_device(Executor& executor, const HostProblem& host, DeviceCopies& out);

// The rung on the device copies: not blocking (timed by CUDA events), its own tolerance.
HostCalls device_copy_calls(Executor& executor, const HostProblem& host, const DeviceCopies& copies,
                            const Variant& variant);

// Runs the work once and checks C at the sample (and everywhere for the poison), then times it
// as the options say: warm-up, then repetitions until a count and a time, C restored before
// each one that reads it and `timer`'s L2 flushed, both outside the timed region. `timer`'s
// device is made current again before each timed call and at the end (a distributed call
// leaves another current). A failure goes into the record, not out: the other runs go on.
void verify_and_time(const Options& options, Executor& timer, const HostProblem& host, const SampledCheck& check,
                     const HostCalls& calls, Record& record);

}  // namespace gemmlab::bench
