// Which device code a compilation pass may contain. nvcc compiles a .cu file once for the
// host and once per architecture of the build; each macro is 1 in the host pass (kernels
// must still be declared there, for their launches) and in the device passes for
// architectures that have the instructions, 0 in the others, where a kernel's body
// compiles to nothing. The host never launches such an empty kernel: every rung declares
// what it needs (Variant::min_compute_capability, arch_specific) and the library checks the
// device and the build before any launch (src/library/availability.cpp).
//
// PTX ISA 8.x, section 12 "Target ISA Notes": cp.async, mma.m16n8k16 on bf16/f16 and
// ldmatrix need sm_80 (ldmatrix sm_75); griddepcontrol, mbarrier expect-tx, cp.async.bulk
// and clusters need sm_90; wgmma and setmaxnreg need the arch-specific sm_90a (as does
// the TMA's tensor form the Hopper engine uses with them).
#pragma once

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
#define GEMMLAB_CODE_SM80 1
#else
#define GEMMLAB_CODE_SM80 0
#endif

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
#define GEMMLAB_CODE_SM90 1
#else
#define GEMMLAB_CODE_SM90 0
#endif

// __CUDA_ARCH_FEAT_SM90_ALL: defined by nvcc in the compute_90a pass only.
#if !defined(__CUDA_ARCH__) || defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define GEMMLAB_CODE_SM90A 1
#else
#define GEMMLAB_CODE_SM90A 0
#endif
