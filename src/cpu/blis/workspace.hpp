// Packing buffers that grow once and are then reused, so a timed run never allocates.
//
// The harness's first call of every rung at a size is an untimed verification run: it
// grows the buffers to what that size needs; timed repetitions at the same size find
// them large enough. A rung keeps one workspace per thread that computes (thread_local
// for the single-thread rungs, one per worker in the pool of the threaded rung).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>

namespace gemmlab::cpu {

// 64-byte aligned float storage (one cache line, one AVX-512 register).
class AlignedFloats {
 public:
  static constexpr std::size_t kAlignment = 64;

  // Grows to at least `count` floats (contents are not kept); false when allocation fails.
  bool reserve(std::int64_t count) {
    if (count <= capacity_) return true;
    float* p = static_cast<float*>(::operator new(static_cast<std::size_t>(count) * sizeof(float),
                                                  std::align_val_t{kAlignment}, std::nothrow));
    if (!p) return false;
    data_.reset(p);
    capacity_ = count;
    return true;
  }
  float* data() const { return data_.get(); }
  std::int64_t capacity() const { return capacity_; }

 private:
  struct Free {
    void operator()(float* p) const { ::operator delete(p, std::align_val_t{kAlignment}); }
  };
  std::unique_ptr<float, Free> data_;
  std::int64_t capacity_ = 0;
};

}  // namespace gemmlab::cpu
