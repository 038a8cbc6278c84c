// Load throughput into a SW128 shared-memory ring, TMA boxes against cp.async 16-byte
// copies, for a K-major operand whose rows start half a sector apart (K bytes an odd
// multiple of 16) and for aligned ones. No math: each of 132 CTAs streams its 128-row block
// over K, R times (the block re-read from L2 as a GEMM re-reads its operand tiles).
// Build: nvcc -O3 -gencode=arch=compute_90a,code=sm_90a ldgsts_probe.cu -lcuda -o probe
// Run: ./probe OUT.json (bench/results/raw/ldgsts-probe-h200.json; rings of 3, 6 and 12
// stages of 16 KiB)
#include <cuda.h>
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdint>
#include <vector>

#define CK(x) do { auto e = (x); if (e != 0) { printf("error %d at %s:%d\n", (int)e, __FILE__, __LINE__); exit(1); } } while (0)

constexpr int ROWS = 128, PIECE = 128, STAGE_BYTES = ROWS * PIECE;

__device__ __forceinline__ uint32_t sa(const void* p) { return (uint32_t)__cvta_generic_to_shared(p); }
__device__ __forceinline__ void mbar_init(uint32_t b, int n) { asm volatile("mbarrier.init.shared.b64 [%0], %1;" :: "r"(b), "r"(n)); }
__device__ __forceinline__ void expect_tx(uint32_t b, int n) { asm volatile("mbarrier.arrive.expect_tx.shared.b64 _, [%0], %1;" :: "r"(b), "r"(n) : "memory"); }
__device__ __forceinline__ void mbar_wait(uint32_t b, uint32_t ph) {
  uint32_t done = 0;
  do { asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.shared.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n" : "=r"(done) : "r"(b), "r"(ph) : "memory"); } while (!done);
}

template <int STAGES>
__global__ void __launch_bounds__(128, 1) tma_kernel(const __grid_constant__ CUtensorMap map, int kpieces, int reps) {
  extern __shared__ __align__(1024) uint8_t raw[];
  const uint32_t smem = (sa(raw) + 1023u) & ~1023u;
  const uint32_t bars = smem + STAGES * STAGE_BYTES;
  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) mbar_init(bars + 8 * s, 1);
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  if (threadIdx.x != 0) return;
  const int row0 = blockIdx.x * ROWS, total = kpieces * reps;
  for (int it = 0; it < total; ++it) {
    const int s = it % STAGES;
    if (it >= STAGES) mbar_wait(bars + 8 * s, ((it / STAGES) - 1) & 1);
    expect_tx(bars + 8 * s, STAGE_BYTES);
    const int kt = it % kpieces;
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
                 :: "r"(smem + s * STAGE_BYTES), "l"(&map), "r"(kt * PIECE), "r"(row0), "r"(bars + 8 * s) : "memory");
  }
  for (int it = total - STAGES; it < total; ++it) if (it >= 0) mbar_wait(bars + 8 * (it % STAGES), (it / STAGES) & 1);
}

template <int STAGES>
__global__ void __launch_bounds__(128, 1) ldgsts_kernel(const uint8_t* A, long long K, int kpieces, int reps) {
  extern __shared__ __align__(1024) uint8_t raw[];
  const uint32_t smem = (sa(raw) + 1023u) & ~1023u;
  const int row0 = blockIdx.x * ROWS, total = kpieces * reps;
  for (int it = 0; it < total; ++it) {
    const int s = it % STAGES, kt = it % kpieces;
    #pragma unroll
    for (int i = 0; i < STAGE_BYTES / 16 / 128; ++i) {
      const int j = threadIdx.x + 128 * i, row = j / 8, c = j % 8;
      const uint8_t* src = A + (row0 + row) * K + kt * PIECE + 16 * c;
      const uint32_t dst = smem + s * STAGE_BYTES + row * 128 + ((c ^ (row & 7)) << 4);
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"(dst), "l"(src) : "memory");
    }
    asm volatile("cp.async.commit_group;" ::: "memory");
    asm volatile("cp.async.wait_group %0;" :: "n"(STAGES - 1) : "memory");
  }
  asm volatile("cp.async.wait_group 0;" ::: "memory");
}


// pairs of CTAs (a cluster of 2) on one 128-row block: each loads its 64 rows and multicasts
// them into both CTAs' stage. A stage is refilled once both CTAs saw it full: a consumer
// warp of each CTA waits for its copy and releases it at once to its own producer and its
// peer's (as a GEMM's consumers release a stage to every CTA that writes into it), so the
// producers run up to a ring ahead of the releases
template <int STAGES>
__global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(128, 1) tma_pair_kernel(const __grid_constant__ CUtensorMap map, int kpieces, int reps) {
  extern __shared__ __align__(1024) uint8_t raw[];
  const uint32_t smem = (sa(raw) + 1023u) & ~1023u;
  const uint32_t full = smem + STAGES * STAGE_BYTES, empty = full + 8 * STAGES;
  uint32_t rank; asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) { mbar_init(full + 8 * s, 1); mbar_init(empty + 8 * s, 2); }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;" ::: "memory");
  const int total = kpieces * reps;
  if (threadIdx.x == 0) {  // the producer
    const int row0 = (blockIdx.x / 2) * ROWS + rank * (ROWS / 2);
    for (int it = 0; it < total; ++it) {
      const int s = it % STAGES;
      if (it >= STAGES) mbar_wait(empty + 8 * s, ((it / STAGES) - 1) & 1);  // both CTAs released it
      expect_tx(full + 8 * s, STAGE_BYTES);
      const int kt = it % kpieces;
      asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, {%2, %3}], [%4], %5;"
                   :: "r"(smem + s * STAGE_BYTES + rank * (STAGE_BYTES / 2)), "l"(&map), "r"(kt * PIECE), "r"(row0), "r"(full + 8 * s), "h"((uint16_t)3) : "memory");
    }
  } else if (threadIdx.x == 32) {  // the consumer: each stage released as soon as it lands
    for (int it = 0; it < total; ++it) {
      const int s = it % STAGES;
      mbar_wait(full + 8 * s, (it / STAGES) & 1);
      asm volatile("mbarrier.arrive.shared.b64 _, [%0];" :: "r"(empty + 8 * s) : "memory");
      asm volatile("{\n.reg .b32 r;\nmapa.shared::cluster.u32 r, %0, %1;\nmbarrier.arrive.shared::cluster.b64 _, [r];\n}"
                   :: "r"(empty + 8 * s), "r"(rank ^ 1) : "memory");
    }
  }
  asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;" ::: "memory");
}

// the same rings with a consumer warp that holds each landed stage `hold` clocks (standing in
// for the tensor cores' time on it) before it releases it: to its own producer (lone CTAs)
// or to both producers (pairs). Whether a pair keeps multicast's feed when its releases wait
// on math, as a GEMM's do
__device__ __forceinline__ void hold_for(long long hold) {
  const long long t0 = clock64();
  while (clock64() - t0 < hold) {}
}

template <int STAGES, bool PAIR>
__global__ void __cluster_dims__(PAIR ? 2 : 1, 1, 1) __launch_bounds__(128, 1) held_kernel(const __grid_constant__ CUtensorMap map, int kpieces, int reps, long long hold) {
  extern __shared__ __align__(1024) uint8_t raw[];
  const uint32_t smem = (sa(raw) + 1023u) & ~1023u;
  const uint32_t full = smem + STAGES * STAGE_BYTES, empty = full + 8 * STAGES;
  uint32_t rank = 0;
  if (PAIR) asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) { mbar_init(full + 8 * s, 1); mbar_init(empty + 8 * s, PAIR ? 2 : 1); }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;" ::: "memory");
  const int total = kpieces * reps;
  if (threadIdx.x == 0) {
    const int row0 = PAIR ? (blockIdx.x / 2) * ROWS + rank * (ROWS / 2) : blockIdx.x * ROWS;
    for (int it = 0; it < total; ++it) {
      const int s = it % STAGES, kt = it % kpieces;
      if (it >= STAGES) mbar_wait(empty + 8 * s, ((it / STAGES) - 1) & 1);
      expect_tx(full + 8 * s, STAGE_BYTES);
      if (PAIR)
        asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, {%2, %3}], [%4], %5;"
                     :: "r"(smem + s * STAGE_BYTES + rank * (STAGE_BYTES / 2)), "l"(&map), "r"(kt * PIECE), "r"(row0), "r"(full + 8 * s), "h"((uint16_t)3) : "memory");
      else
        asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
                     :: "r"(smem + s * STAGE_BYTES), "l"(&map), "r"(kt * PIECE), "r"(row0), "r"(full + 8 * s) : "memory");
    }
  } else if (threadIdx.x == 32) {
    for (int it = 0; it < total; ++it) {
      const int s = it % STAGES;
      mbar_wait(full + 8 * s, (it / STAGES) & 1);
      hold_for(hold);
      asm volatile("mbarrier.arrive.shared.b64 _, [%0];" :: "r"(empty + 8 * s) : "memory");
      if (PAIR)
        asm volatile("{\n.reg .b32 r;\nmapa.shared::cluster.u32 r, %0, %1;\nmbarrier.arrive.shared::cluster.b64 _, [r];\n}"
                     :: "r"(empty + 8 * s), "r"(rank ^ 1) : "memory");
    }
  }
  asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;" ::: "memory");
}

// a K-major operand of `rows` rows of K bytes as TMA sees it: boxes of one 128-byte piece
// of K by `box_rows` rows, swizzled 128B (the stage layout every kernel here fills)
CUtensorMap operand_map(uint8_t* A, long long K, long long rows, cuuint32_t box_rows) {
  CUtensorMap map;
  cuuint64_t dims[2] = {(cuuint64_t)K, (cuuint64_t)rows}, strides[1] = {(cuuint64_t)K};
  cuuint32_t box[2] = {PIECE, box_rows}, es[2] = {1, 1};
  CK(cuTensorMapEncodeTiled(&map, CU_TENSOR_MAP_DATA_TYPE_UINT8, 2, A, dims, strides, box, es,
                            CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                            CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
  return map;
}

// the least time of six launches after a first one that warms up, in ms
template <class Launch>
float best_ms(Launch launch) {
  cudaEvent_t a, b; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
  float best = 1e30f;
  for (int trial = 0; trial < 7; ++trial) {
    CK(cudaEventRecord(a));
    launch();
    CK(cudaEventRecord(b)); CK(cudaEventSynchronize(b)); CK(cudaGetLastError());
    float ms; CK(cudaEventElapsedTime(&ms, a, b)); if (trial > 0 && ms < best) best = ms;
  }
  CK(cudaEventDestroy(a)); CK(cudaEventDestroy(b));
  return best;
}

// one result row to `out` (JSON) and the console: the bytes every CTA received over the time
// (`hold` < 0: no consumer hold, a run_depth row)
void report(FILE* out, bool& first, int ctas, int S, long long K, long long hold, const char* what,
            float ms, int kpieces, int reps) {
  const double moved = (double)ctas * ROWS * PIECE * kpieces * reps, s = ms * 1e-3;
  fprintf(out, "%s {\"ctas\": %d, \"stages\": %d, \"K\": %lld, \"K_mod_32\": %lld, ",
          first ? "" : ",", ctas, S, K, K % 32);
  if (hold >= 0) fprintf(out, "\"hold_clocks\": %lld, ", hold);
  fprintf(out, "\"load\": \"%s\", \"us\": %.2f, \"tb_per_s\": %.3f}\n", what, ms * 1e3, moved / s / 1e12);
  first = false;
  printf("ctas=%d S=%d K=%lld hold=%lld %s %.2f us %.3f TB/s delivered, %.1f GB/s a CTA\n", ctas, S, K,
         hold, what, ms * 1e3, moved / s / 1e12, moved / s / 1e9 / ctas);
}

// lone CTAs and pairs at each hold, on each K, appended to `out`
template <int S>
void run_held(FILE* out, bool& first, const long long* Ks, int nk, const long long* holds, int nh) {
  const int ctas = 132, reps = 8, smem_bytes = S * STAGE_BYTES + 1024 + 16 * S;
  CK(cudaFuncSetAttribute(held_kernel<S, false>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_bytes));
  CK(cudaFuncSetAttribute(held_kernel<S, true>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_bytes));
  for (int ki = 0; ki < nk; ++ki) {
    const long long K = Ks[ki], rows = (long long)ctas * ROWS;
    uint8_t* A; CK(cudaMalloc(&A, rows * K)); CK(cudaMemset(A, 1, rows * K));
    const CUtensorMap map = operand_map(A, K, rows, ROWS), half_map = operand_map(A, K, rows, ROWS / 2);
    const int kpieces = (int)(K / PIECE);
    for (int hi = 0; hi < nh; ++hi) {
      const long long hold = holds[hi];
      const float lone = best_ms([&] { held_kernel<S, false><<<ctas, 128, smem_bytes>>>(map, kpieces, reps, hold); });
      report(out, first, ctas, S, K, hold, "held: TMA SW128 box", lone, kpieces, reps);
      const float pair = best_ms([&] { held_kernel<S, true><<<ctas, 128, smem_bytes>>>(half_map, kpieces, reps, hold); });
      report(out, first, ctas, S, K, hold, "held: TMA pairs, 64-row halves multicast", pair, kpieces, reps);
    }
    CK(cudaFree(A));
  }
}

// every kernel at ring depth S on each K, appended to `out`
template <int S>
void run_depth(FILE* out, bool& first, const long long* Ks, int nk, int ctas = 132) {
  const int reps = 8, smem_bytes = S * STAGE_BYTES + 1024 + 16 * S;
  CK(cudaFuncSetAttribute(tma_kernel<S>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_bytes));
  CK(cudaFuncSetAttribute(tma_pair_kernel<S>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_bytes));
  CK(cudaFuncSetAttribute(ldgsts_kernel<S>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_bytes));
  for (int ki = 0; ki < nk; ++ki) {
    const long long K = Ks[ki], rows = (long long)ctas * ROWS;
    uint8_t* A; CK(cudaMalloc(&A, rows * K)); CK(cudaMemset(A, 1, rows * K));
    // boxes of the block's 128 rows; the pairs' of 64
    const CUtensorMap map = operand_map(A, K, rows, ROWS), half_map = operand_map(A, K, rows, ROWS / 2);
    const int kpieces = (int)(K / PIECE);  // whole pieces (the last partial one left out)
    report(out, first, ctas, S, K, -1, "TMA SW128 box",
           best_ms([&] { tma_kernel<S><<<ctas, 128, smem_bytes>>>(map, kpieces, reps); }), kpieces, reps);
    report(out, first, ctas, S, K, -1, "cp.async 16B",
           best_ms([&] { ldgsts_kernel<S><<<ctas, 128, smem_bytes>>>(A, K, kpieces, reps); }), kpieces, reps);
    report(out, first, ctas, S, K, -1, "TMA pairs, 64-row halves multicast",
           best_ms([&] { tma_pair_kernel<S><<<ctas, 128, smem_bytes>>>(half_map, kpieces, reps); }), kpieces, reps);
    CK(cudaFree(A));
  }
}

int main(int argc, char** argv) {
  CK(cuInit(0)); CUdevice dev; CK(cuDeviceGet(&dev, 0)); CUcontext ctx; CK(cuDevicePrimaryCtxRetain(&ctx, dev)); CK(cuCtxSetCurrent(ctx));
  FILE* out = fopen(argc > 1 ? argv[1] : "probe.json", "w");
  fprintf(out, "{\"what\": \"L2->shared load rate, 132 CTAs x 128 rows, 128-byte k pieces, 8 passes; 132 CTAs unless said\", \"rows\": [\n");
  bool first = true;
  const long long Ks[] = {1024, 1040, 2048, 2064, 2080, 4096, 4112}, fit[] = {2048, 2064};
  run_depth<6>(out, first, Ks, 7);
  run_depth<3>(out, first, fit, 2);
  run_depth<12>(out, first, fit, 2);
  for (int ctas : {66, 16}) run_depth<6>(out, first, fit, 2, ctas);  // fewer SMs: L2's limit or an SM's?
  const long long holds[] = {0, 150, 300, 600, 1200};  // clocks a stage is held: 300 ~ 150 ns
  run_held<6>(out, first, fit, 2, holds, 5);
  run_held<12>(out, first, fit, 2, holds, 5);  // a deeper ring: does it hide the pair's coupling?
  fprintf(out, "]}\n"); fclose(out);
  return 0;
}
