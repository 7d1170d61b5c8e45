#include "dlpack.hpp"

#include <nanobind/stl/vector.h>

#include <string>

namespace nb = nanobind;

namespace gemmlab::python {

DLPackView::DLPackView(nb::handle capsule) {
  PyObject* object = capsule.ptr();
  if (!PyCapsule_CheckExact(object))
    throw nb::type_error("DLPackView takes the capsule an array's __dlpack__() returns");
  const char* name = PyCapsule_GetName(object);
  const std::string kind = name ? name : "";
  if (kind == "dltensor") {
    legacy_ = static_cast<dl::ManagedTensor*>(PyCapsule_GetPointer(object, "dltensor"));
  } else if (kind == "dltensor_versioned") {
    versioned_ = static_cast<dl::ManagedTensorVersioned*>(PyCapsule_GetPointer(object, "dltensor_versioned"));
    if (versioned_ && versioned_->version.major > 1)
      throw nb::value_error(("DLPack " + std::to_string(versioned_->version.major) +
                             ".x is newer than the 1.x this module reads")
                                .c_str());
    if (versioned_) readonly_ = (versioned_->flags & 1u) != 0;
  } else {
    throw nb::value_error(("a DLPack capsule named '" + kind +
                           "' (a capsule is consumed once: call __dlpack__() again for a new one)")
                              .c_str());
  }
  if (!legacy_ && !versioned_) throw nb::python_error();
  // The protocol: a consumer renames the capsule, so the producer's capsule destructor no
  // longer releases the tensor; this view does, once.
  if (PyCapsule_SetName(object, legacy_ ? "used_dltensor" : "used_dltensor_versioned") != 0)
    throw nb::python_error();
}

DLPackView::~DLPackView() {
  if (legacy_ && legacy_->deleter) legacy_->deleter(legacy_);
  if (versioned_ && versioned_->deleter) versioned_->deleter(versioned_);
}

std::uintptr_t DLPackView::data() const {
  return reinterpret_cast<std::uintptr_t>(tensor().data) + static_cast<std::uintptr_t>(tensor().byte_offset);
}

std::vector<std::int64_t> DLPackView::shape() const {
  const dl::Tensor& t = tensor();
  return std::vector<std::int64_t>(t.shape, t.shape + t.ndim);
}

std::vector<std::int64_t> DLPackView::strides() const {
  const dl::Tensor& t = tensor();
  if (t.strides) return std::vector<std::int64_t>(t.strides, t.strides + t.ndim);
  std::vector<std::int64_t> compact(static_cast<std::size_t>(t.ndim), 1);
  for (std::int32_t i = t.ndim - 2; i >= 0; --i)
    compact[static_cast<std::size_t>(i)] = compact[static_cast<std::size_t>(i) + 1] * t.shape[i + 1];
  return compact;
}

nb::tuple DLPackView::dtype() const {
  const dl::DataType& d = tensor().dtype;
  return nb::make_tuple(int(d.code), int(d.bits), int(d.lanes));
}

nb::tuple DLPackView::device() const {
  const dl::Device& d = tensor().device;
  return nb::make_tuple(int(d.device_type), int(d.device_id));
}

void bind_dlpack(nb::module_& m) {
  nb::class_<DLPackView>(m, "DLPackView",
                         "A consumed DLPack capsule: data pointer, shape, strides (elements), dtype "
                         "(code, bits, lanes) and device (type, id). The tensor is released with the view.")
      .def(nb::init<nb::handle>(), nb::arg("capsule"))
      .def_prop_ro("data", &DLPackView::data)
      .def_prop_ro("shape", &DLPackView::shape)
      .def_prop_ro("strides", &DLPackView::strides)
      .def_prop_ro("dtype", &DLPackView::dtype)
      .def_prop_ro("device", &DLPackView::device)
      .def_prop_ro("readonly", &DLPackView::readonly);
}

}  // namespace gemmlab::python
