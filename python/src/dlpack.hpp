// Reading a DLPack capsule (the object `x.__dlpack__(stream=...)` returns): where the data
// is, its shape, strides, element type and device. The structures are DLPack's ABI
// (dmlc/dlpack, include/dlpack/dlpack.h), stable since 0.x; both the legacy capsule
// ("dltensor") and the versioned one of DLPack 1.0 ("dltensor_versioned") are read.
#pragma once

#include <nanobind/nanobind.h>

#include <cstdint>
#include <vector>

namespace gemmlab::python {

namespace dl {
struct Device {
  std::int32_t device_type;  // kDLCPU = 1, kDLCUDA = 2, kDLCUDAHost = 3, kDLCUDAManaged = 13
  std::int32_t device_id;
};
struct DataType {
  std::uint8_t code;  // kDLInt = 0, kDLUInt = 1, kDLFloat = 2, kDLBfloat = 4, ...
  std::uint8_t bits;
  std::uint16_t lanes;
};
struct Tensor {
  void* data;
  Device device;
  std::int32_t ndim;
  DataType dtype;
  std::int64_t* shape;
  std::int64_t* strides;  // in elements; null: compact row-major
  std::uint64_t byte_offset;
};
struct ManagedTensor {
  Tensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(ManagedTensor*);
};
struct PackVersion {
  std::uint32_t major, minor;
};
struct ManagedTensorVersioned {
  PackVersion version;
  void* manager_ctx;
  void (*deleter)(ManagedTensorVersioned*);
  std::uint64_t flags;  // bit 0: read-only
  Tensor dl_tensor;
};
}  // namespace dl

// A consumed capsule: renamed "used_dltensor" as the protocol asks, and its tensor released
// (the producer's deleter called) when this view is destroyed. Keep the view alive while
// the data is used.
class DLPackView {
 public:
  explicit DLPackView(nanobind::handle capsule);
  ~DLPackView();
  DLPackView(const DLPackView&) = delete;
  DLPackView& operator=(const DLPackView&) = delete;

  std::uintptr_t data() const;  // the first element: data + byte_offset
  std::vector<std::int64_t> shape() const;
  std::vector<std::int64_t> strides() const;  // in elements, compact row-major where absent
  // (code, bits, lanes) and (device_type, device_id) as DLPack numbers them.
  nanobind::tuple dtype() const;
  nanobind::tuple device() const;
  bool readonly() const { return readonly_; }

 private:
  const dl::Tensor& tensor() const { return legacy_ ? legacy_->dl_tensor : versioned_->dl_tensor; }
  dl::ManagedTensor* legacy_ = nullptr;
  dl::ManagedTensorVersioned* versioned_ = nullptr;
  bool readonly_ = false;
};

void bind_dlpack(nanobind::module_& m);

}  // namespace gemmlab::python
