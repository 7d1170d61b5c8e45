// gemmlab._core: the C++ library as the Python package (python/gemmlab) uses it. The
// package does the Python side (arrays of NumPy, PyTorch, CuPy; layouts; streams; the
// per-thread contexts); this module takes plain numbers: pointers, shapes, leading
// dimensions, names. Reports come from the CLI's own writers (bench/report.hpp,
// bench/lab_report.hpp) as JSON text, so Python sees the fields the CLI's JSON has.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "bench/harness.hpp"
#include "bench/lab_report.hpp"
#include "bench/report.hpp"
#include "core/build_info.hpp"
#include "core/executor.hpp"
#include "core/host_info.hpp"
#include "core/random.hpp"
#include "core/verify.hpp"
#include "cuda/lab.hpp"
#include "dlpack.hpp"
#include "errors.hpp"
#include "gemmlab/availability.hpp"
#include "gemmlab/context.hpp"
#include "gemmlab/gemm.hpp"
#include "gemmlab/registry.hpp"

#ifdef GEMMLAB_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace nb = nanobind;
using namespace nb::literals;

namespace gemmlab::python {
namespace {

// The library makes a context's device current and leaves it so (as cuBLAS does); a Python
// caller's frameworks (PyTorch, CuPy) keep their own idea of the current device, so every call
// that may choose a device gives the thread back the device it had.
class KeepCurrentDevice {
 public:
  KeepCurrentDevice() {
#ifdef GEMMLAB_HAVE_CUDA
    if (cudaGetDevice(&device_) != cudaSuccess) {
      (void)cudaGetLastError();
      device_ = -1;
    }
#endif
  }
  ~KeepCurrentDevice() {
#ifdef GEMMLAB_HAVE_CUDA
    int now = -1;
    if (device_ >= 0 && cudaGetDevice(&now) == cudaSuccess && now != device_) (void)cudaSetDevice(device_);
    (void)cudaGetLastError();
#endif
  }
  KeepCurrentDevice(const KeepCurrentDevice&) = delete;
  KeepCurrentDevice& operator=(const KeepCurrentDevice&) = delete;

 private:
  int device_ = -1;
};

// A dict from (key, value) pairs, in order: nanobind's dict has no keyword constructor.
nb::dict record(std::initializer_list<std::pair<const char*, nb::object>> fields) {
  nb::dict out;
  for (const auto& [key, value] : fields) out[key] = value;
  return out;
}

Backend backend_named(const std::string& name) {
  const std::optional<Backend> backend = parse_backend(name);
  if (!backend) throw nb::value_error(("backend '" + name + "' must be 'cpu' or 'cuda'").c_str());
  return *backend;
}

DType dtype_named(std::string_view name, const char* what) {
  const std::optional<DType> dtype = parse_dtype(name);
  if (!dtype) {
    throw nb::value_error((std::string(what) + " '" + std::string(name) + "' must be " + dtype_names_text()).c_str());
  }
  return *dtype;
}

std::unique_ptr<Context> make_context(const std::string& backend, int device, int threads) {
  ContextOptions options;
  options.backend = backend_named(backend);
  options.device = device;
  options.threads = threads;
  std::unique_ptr<Context> context;
  Status status;
  {
    const KeepCurrentDevice keep;
    status = Context::create(options, context);
  }
  raise_if_failed(status);
  return context;
}

// One operand as the package describes it: row-major storage `rows` x `cols` with leading
// dimension `ld` at address `data`, and whether the GEMM reads it transposed.
using Operand = std::tuple<std::uintptr_t, std::int64_t, std::int64_t, std::int64_t, bool>;

Matrix matrix_of(const Operand& operand, DType dtype) {
  const auto& [data, rows, cols, ld, transposed] = operand;
  Matrix x;
  x.data = reinterpret_cast<void*>(data);
  x.rows = rows;
  x.cols = cols;
  x.ld = ld;
  x.layout = Layout::RowMajor;
  x.dtype = dtype;
  return x;
}

// C <- alpha op(A) op(B) + beta C in `context`, on `stream` (a cudaStream_t as an integer;
// 0: the legacy default stream), A and B holding `dtype`, C `out_dtype`. Returns the rung and
// configuration that ran.
std::tuple<std::string, std::string> run_gemm(Context& context, std::uintptr_t stream, std::int64_t m,
                                              std::int64_t n, std::int64_t k, const Operand& a, const Operand& b,
                                              const Operand& c, std::string_view dtype, std::string_view out_dtype,
                                              std::string_view compute, double alpha, double beta,
                                              double scale_a, double scale_b, std::string_view variant,
                                              std::string_view config) {
  // The strings arrive as views of the Python str objects (no copy per call); the options
  // below copy the rung's name once, where the library needs it.
  GemmProblem problem;
  problem.m = m;
  problem.n = n;
  problem.k = k;
  problem.op_a = std::get<4>(a) ? Op::T : Op::N;
  problem.op_b = std::get<4>(b) ? Op::T : Op::N;
  problem.alpha = alpha;
  problem.beta = beta;
  problem.scale_a = scale_a;  // (validate refuses a scale other than 1 beside inputs that are not FP8)
  problem.scale_b = scale_b;
  problem.a = matrix_of(a, dtype_named(dtype, "dtype"));
  problem.b = matrix_of(b, problem.a.dtype);
  problem.c = matrix_of(c, dtype_named(out_dtype, "out_dtype"));
  // `compute` names the call's type as bench's --dtype does (f32, tf32, bf16, f16, e4m3,
  // e5m2): its arithmetic is that name's (bf16, f16 and FP8 inputs are multiplied exactly and
  // summed in f32, FP8 with its per-tensor scales); C is float32 or, for bf16 and f16, that
  // type itself, or bf16 or f16 beside FP8 inputs (as bench's --out-dtype).
  const DType name = dtype_named(compute, "compute");
  if (!precision_for(name)) {
    throw nb::value_error(("compute '" + std::string(compute) + "' must be " + dtype_names_text()).c_str());
  }
  if (is_fp8(problem.c.dtype)) throw nb::value_error(std::string(kFp8OutputRefusal).c_str());
  const std::optional<Precision> precision = precision_for(name, problem.c.dtype);
  if (!precision) {
    throw nb::value_error(("C of " + std::string(out_dtype) + " goes with " + std::string(out_dtype) +
                           " inputs only (C is f32, the 2-byte input type, or bf16 or f16 beside FP8 inputs), not " +
                           std::string(compute))
                              .c_str());
  }
  problem.compute = precision->compute;
  GemmOptions options;
  options.variant.assign(variant);
  options.config.assign(config);
  Variant chosen;
  Status status;
  {
    nb::gil_scoped_release release;
    const KeepCurrentDevice keep;
    context.set_stream(reinterpret_cast<Stream>(stream));
    status = resolve_variant(context, problem, options, chosen);
    if (status) status = gemm(context, problem, chosen);
  }
  raise_if_failed(status);
  return {chosen.name, chosen.config_name};
}

nb::list variant_records(std::optional<std::string> backend) {
  std::vector<Backend> backends;
  if (backend) backends.push_back(backend_named(*backend));
  else backends = {Backend::Cpu, Backend::Cuda};
  const auto text = [](auto value) { return nb::cast(std::string(to_string(value))); };
  nb::list out;
  for (Backend b : backends)
    for (const Variant& v : variants(b)) {
      nb::list configs;
      for (const NamedConfig& c : v.configs)
        configs.append(record({{"name", nb::cast(c.name)},
                               {"description", nb::cast(c.description)},
                               {"default", nb::cast(c.name == v.config_name)}}));
      const std::optional<DType> name = dtype_name(v.precision());
      const std::string reason = unavailable_here(v);
      // The bound its results are verified against (tolerance.hpp).
      const Tolerance t = v.tolerance ? *v.tolerance : tolerance_for(v.input, v.compute, v.output);
      out.append(record({{"name", nb::cast(v.name)},
                         {"backend", text(v.backend)},
                         {"rung", nb::cast(v.rung)},
                         {"anchor", nb::cast(v.anchor)},
                         {"dtype", name ? text(*name) : nb::none()},
                         {"input", text(v.input)},
                         {"compute", text(v.compute)},
                         {"output", text(v.output)},
                         {"technique", nb::cast(v.technique)},
                         {"config", nb::cast(v.config.to_string())},
                         {"configs", configs},
                         {"threads", nb::cast(v.threads)},
                         {"tensor_cores", nb::cast(v.tensor_cores)},
                         {"min_compute_capability", nb::cast(v.min_compute_capability)},
                         {"arch_specific", nb::cast(v.arch_specific)},
                         {"tolerance", record({{"input_u", nb::cast(t.input_u)},
                                               {"accumulate_u", nb::cast(t.accumulate_u)},
                                               {"output_u", nb::cast(t.output_u)},
                                               {"output_min_normal", nb::cast(t.output_min_normal)},
                                               {"terms_per_k", nb::cast(t.terms_per_k)},
                                               {"promote_every", nb::cast(t.promote_every)},
                                               {"partial_u", nb::cast(t.partial_u)}})},
                         {"runs_here", nb::cast(reason.empty())},
                         {"reason", nb::cast(reason)}}));
    }
  return out;
}

// The options of `gemmlab bench` / `gemmlab verify` (src/cli/cmd_bench.cpp), as keywords.
struct HarnessArgs {
  std::string command = "bench";  // or "verify"
  std::string backend = "cpu";
  int device = 0;
  std::string dtype = "f32";
  std::string out_dtype = "f32";
  std::vector<std::string> variants;
  std::string config;
  std::vector<std::tuple<std::int64_t, std::int64_t, std::int64_t>> shapes;
  std::string trans = "NN";
  std::string layout = "row";
  double alpha = 1, beta = 0;
  std::int64_t pad = 0;
  std::optional<std::uint64_t> seed;
  bool verify = true;
  std::optional<int> warmup, reps;
  std::optional<double> min_time, max_time, max_spread;
  std::optional<bool> interleave;
  std::optional<std::string> l2_flush;
  bool samples = false;
  std::string command_line;
};

// Runs the harness and returns its JSON document, as `gemmlab bench --format json` writes it.
std::string run_harness(const HarnessArgs& args) {
  const Backend backend = backend_named(args.backend);
  bench::Options o;
  o.dtype = dtype_named(args.dtype, "dtype");
  o.out_dtype = dtype_named(args.out_dtype, "out_dtype");
  if (const Status s = bench::check_dtypes(o.dtype, o.out_dtype); !s) throw nb::value_error(s.message().c_str());
  o.variants = args.variants;
  o.config = args.config;
  for (const auto& [m, n, k] : args.shapes) o.shapes.push_back({m, n, k});
  if (args.trans.size() != 2 || !parse_op(args.trans[0]) || !parse_op(args.trans[1]))
    throw nb::value_error(("trans '" + args.trans + "' must be NN, NT, TN or TT").c_str());
  o.op_a = *parse_op(args.trans[0]);
  o.op_b = *parse_op(args.trans[1]);
  const std::optional<Layout> layout = parse_layout(args.layout);
  if (!layout) throw nb::value_error(("layout '" + args.layout + "' must be 'row' or 'col'").c_str());
  o.layout = *layout;
  o.alpha = args.alpha;
  o.beta = args.beta;
  o.ld_padding = args.pad;
  o.seed = args.seed ? *args.seed : fresh_seed();
  o.verify = args.verify;
  o.time = args.command == "bench";
  if (args.reps) {
    o.min_reps = *args.reps;
    o.max_reps = std::max(o.max_reps, *args.reps);
  }
  if (args.warmup) o.warmup = *args.warmup;
  if (args.min_time) o.min_seconds = *args.min_time;
  if (args.max_time) o.max_seconds = *args.max_time;
  if (args.max_spread) o.max_spread = *args.max_spread / 100;
  o.interleave = args.interleave;
  if (args.l2_flush) {
    const std::optional<CacheFlush> flush = parse_cache_flush(*args.l2_flush);
    if (!flush) throw nb::value_error(("l2_flush '" + *args.l2_flush + "' must be clean, write or none").c_str());
    if (backend != Backend::Cuda)
      throw nb::value_error("l2_flush applies to the GPU's L2; the cpu backend flushes nothing");
    o.flush = *flush;
  }

  bench::RunContext context;
  std::vector<bench::Record> records;
  context.date = bench::utc_now();
  Status status;
  {
    nb::gil_scoped_release release;
    const KeepCurrentDevice keep;  // declared first: the executor is gone before it restores
    std::unique_ptr<Executor> executor;
    if (backend == Backend::Cpu) executor = make_cpu_executor();
    else status = make_cuda_executor(executor, args.device);
    if (status) status = bench::run(o, *executor, records);
    if (status) context.device = executor->describe();
  }
  raise_if_failed(status);
  context.command = args.command;
  context.backend = std::string(to_string(backend));
  context.options = o;
  context.command_line = args.command_line;
  context.host = host_info().hostname;
  context.samples = args.samples;
  return bench::to_json(records, context).dump();
}

std::string devices_json_text() {
  std::vector<cuda::DeviceFacts> all;
  raise_if_failed(cuda::query_all_devices(all));
  return bench::devices_json(all).dump();
}

std::string device_measured_json_text(int device) {
  cuda::CeilingOptions options;
  options.device = device;
  cuda::DeviceFacts facts;
  cuda::Ceilings ceilings;
  Status status;
  {
    nb::gil_scoped_release release;
    const KeepCurrentDevice keep;
    status = cuda::measure_ceilings(options, facts, ceilings);
  }
  raise_if_failed(status);
  return bench::device_json(facts, ceilings).dump();
}

// The CUDA device that holds `address` (for an array that says only where its data is, as
// __cuda_array_interface__ does); -1 for host memory the runtime does not know.
int pointer_device(std::uintptr_t address) {
#ifdef GEMMLAB_HAVE_CUDA
  cudaPointerAttributes attributes{};
  const cudaError_t error = cudaPointerGetAttributes(&attributes, reinterpret_cast<const void*>(address));
  if (error != cudaSuccess) {
    (void)cudaGetLastError();  // not sticky: clear it
    throw nb::value_error((std::string("cudaPointerGetAttributes cannot place this address: ") +
                           cudaGetErrorString(error))
                              .c_str());
  }
  return attributes.type == cudaMemoryTypeDevice || attributes.type == cudaMemoryTypeManaged ? attributes.device
                                                                                              : -1;
#else
  (void)address;
  return -1;
#endif
}

// A host array's data address through the buffer protocol (NumPy: no __array_interface__
// dict per call), or None where the object exports no buffer (then the package reads
// __array_interface__).
nb::object buffer_address(nb::handle array) {
  Py_buffer view;
  if (PyObject_GetBuffer(array.ptr(), &view, PyBUF_STRIDES) != 0) {
    PyErr_Clear();
    return nb::none();
  }
  const auto address = reinterpret_cast<std::uintptr_t>(view.buf);
  PyBuffer_Release(&view);
  return nb::steal(PyLong_FromSize_t(address));
}

nb::dict build_record() {
  const BuildInfo b = build_info();
  return record({{"version", nb::cast(b.version)},
                 {"commit", nb::cast(b.commit)},
                 {"build_type", nb::cast(b.build_type)},
                 {"cxx_compiler", nb::cast(b.cxx_compiler)},
                 {"cuda_compiler", nb::cast(b.cuda_compiler)},
                 {"cuda_architectures", nb::cast(b.cuda_architectures)},
                 {"cuda_built", nb::cast(cuda_built())}});
}

}  // namespace
}  // namespace gemmlab::python

NB_MODULE(_core, m) {
  using namespace gemmlab;
  using namespace gemmlab::python;
  m.doc() = "gemmlab's C++ library; use the package gemmlab, which wraps it";
  nb::exception<StatusError>(m, "GemmlabError", PyExc_RuntimeError);

  nb::class_<Context>(m, "Context",
                      "A gemmlab::Context: one backend (and CUDA device), its workspaces and handles. "
                      "One thread at a time.")
      .def_static("create", &make_context, "backend"_a, "device"_a = 0, "threads"_a = 0,
                  "A context for backend 'cpu' or 'cuda' (device: a CUDA ordinal; threads: CPU threads, 0 all)")
      .def_prop_ro("backend", [](const Context& c) { return std::string(to_string(c.backend())); })
      .def_prop_ro("device", &Context::device);

  m.def("gemm", &run_gemm, "context"_a, "stream"_a, "m"_a, "n"_a, "k"_a, "a"_a, "b"_a, "c"_a, "dtype"_a,
        "out_dtype"_a, "compute"_a, "alpha"_a, "beta"_a, "scale_a"_a, "scale_b"_a, "variant"_a, "config"_a,
        "C <- alpha (scale_a op(A)) (scale_b op(B)) + beta C on row-major operands (data, rows, cols, ld, "
        "transposed), A and B of dtype, C of out_dtype; the scales are FP8 inputs' (1 otherwise); returns "
        "(rung, configuration)");
  m.def("variants", &variant_records, "backend"_a = nb::none());
  m.def("cuda_built", &cuda_built);
  m.def("cuda_device_present", &cuda_device_present);
  m.def("build_info", &build_record);
  m.def("devices_json", &devices_json_text);
  m.def("device_measured_json", &device_measured_json_text, "device"_a);
  m.def("pointer_device", &pointer_device, "address"_a);
  m.def("buffer_address", &buffer_address, "array"_a);

  nb::class_<HarnessArgs>(m, "HarnessArgs")
      .def(nb::init<>())
      .def_rw("command", &HarnessArgs::command)
      .def_rw("backend", &HarnessArgs::backend)
      .def_rw("device", &HarnessArgs::device)
      .def_rw("dtype", &HarnessArgs::dtype)
      .def_rw("out_dtype", &HarnessArgs::out_dtype)
      .def_rw("variants", &HarnessArgs::variants)
      .def_rw("config", &HarnessArgs::config)
      .def_rw("shapes", &HarnessArgs::shapes)
      .def_rw("trans", &HarnessArgs::trans)
      .def_rw("layout", &HarnessArgs::layout)
      .def_rw("alpha", &HarnessArgs::alpha)
      .def_rw("beta", &HarnessArgs::beta)
      .def_rw("pad", &HarnessArgs::pad)
      .def_rw("seed", &HarnessArgs::seed)
      .def_rw("verify", &HarnessArgs::verify)
      .def_rw("warmup", &HarnessArgs::warmup)
      .def_rw("reps", &HarnessArgs::reps)
      .def_rw("min_time", &HarnessArgs::min_time)
      .def_rw("max_time", &HarnessArgs::max_time)
      .def_rw("max_spread", &HarnessArgs::max_spread)
      .def_rw("interleave", &HarnessArgs::interleave)
      .def_rw("l2_flush", &HarnessArgs::l2_flush)
      .def_rw("samples", &HarnessArgs::samples)
      .def_rw("command_line", &HarnessArgs::command_line);
  m.def("run_harness", &run_harness, "args"_a,
        "Runs gemmlab bench or verify; returns the JSON document the CLI's --format json writes");

  bind_dlpack(m);
}
