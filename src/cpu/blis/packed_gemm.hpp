// The BLIS five-loop driver shared by 05_packed_simd (one thread) and 06_threaded (a team).
//
//   for jc in n step NC                         B block (KC, NC) packed, shared by the team (L3)
//     for pc in k step KC
//       pack op(B)(pc.., jc..)                  each thread packs a share of the NR panels
//       for ic in this thread's rows step MC    A block (MC, KC) packed per thread (L2)
//         pack op(A)(ic.., pc..)
//         for jr in this thread's panels step NR    B micro-panel (KC, NR) stays in L1
//           for ir in mc step MR                    A micro-panel (MR, KC) streams from L2
//             micro-kernel: C(MR, NR) += A panel * B panel  (registers)
//
// That is the order for a kernel with L1Panel::B (AVX2, portable). A kernel with
// L1Panel::A (AVX-512 12x32) swaps the two innermost loops: for ir { for jr }, the A
// micro-panel stays in L1 and the B block, sized for L2 by blocking_for(), streams past it.
//
// Block counts are balanced (k = 2049 with KC = 256 gives nine blocks of 228, not eight of
// 256 and one of 1). The first pc block applies the caller's beta, the later ones add.
#pragma once

#include <cstdint>

#include "cpu/blis/microkernel.hpp"
#include "cpu/blis/packing.hpp"
#include "cpu/thread_pool.hpp"
#include "cpu/blis/workspace.hpp"
#include "gemmlab/problem.hpp"

namespace gemmlab::cpu {

// How a team of threads splits one GEMM: a grid of ways_ic x ways_jr threads, the rows of
// C (in MR panels) split ways_ic ways, the NR panels of each B block split ways_jr ways.
struct TeamShape {
  int threads = 1;
  int ways_ic = 1, ways_jr = 1;
};

// The grid for `threads` threads on this problem that gives the busiest thread the least
// work: its micro-tiles plus the A rows it packs (threads sharing rows each pack them);
// among equals, more ways over rows. 2 threads on 2048^2: 2 x 1; 16 threads on 2048^2:
// 8 x 2 (each thread 258 rows and 64 of the 128 B panels, 1 MiB of B per KC block, which
// it re-reads from L2/L3 for each of its A blocks); m = 1: 1 x threads.
TeamShape team_shape(int threads, std::int64_t m, std::int64_t n, const Blocking& blocking);

// Floats of workspace a problem needs: one packed A block per thread, two packed B blocks
// (double-buffered: the team packs block pc+1 while stragglers still read block pc).
std::int64_t a_buffer_floats(const Blocking& blocking, std::int64_t m, std::int64_t k);
std::int64_t b_buffer_floats(const Blocking& blocking, std::int64_t n, std::int64_t k);

// Everything the threads of one GEMM share.
struct PackedJob {
  RowMajorGemm g;
  const MicroKernel* kernel;
  Blocking blocking;
  TeamShape team;
  float* b_buffers[2];      // shared packed B blocks, b_buffer_floats each
  TeamBarrier* barrier;     // nullptr for one thread
};

// Thread `tid`'s part of the job; `a_buffer` is its own, a_buffer_floats long.
void packed_gemm_part(const PackedJob& job, int tid, float* a_buffer);

}  // namespace gemmlab::cpu
