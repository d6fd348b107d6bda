// Pairwise gravitational accelerations in CUDA C: the CuPy backend's kernels (cupy_cuda.py)
// and the instruction-count yardstick of `nbsymple gpu-asm`. Version E's fused kernels
// (gpu_full/fused.cu) are compiled after this file and use its records, sums and KERNEL_HEAD.
//
// The same algorithm as the numba-cuda kernels of numba_cuda.py, part for part:
//   tiled   one thread per target; each tile of TILE sources is loaded into shared memory by
//           the block (one body per thread), __syncthreads, every thread sums the tile's pull,
//           __syncthreads (GPU Gems 3, ch. 31). Every thread reaches every barrier: threads past
//           the end of the slice load, wait and compute on a clamped target, and write nothing.
//   plain   one thread per target reading every source straight from global memory (through
//           L1): no shared memory, no barrier.
//
// Bodies (padded with zero-mass bodies at the origin to a multiple of TILE), one record each
// (records.py):
//   sp   float4 (x, y, z, w = m)
//   dp   double (x, y, z, w = m), 16-byte aligned (two 128-bit loads)
//   dsp  float4 hi (xh, yh, zh, m) and float4 lo (xl, yl, zl, 0): x = xh + xl (core/dsp.py)
// Output: 3 rows of (stop - start) accelerations, row-major.
//
// Compile-time parameters, given by cupy_cuda.py as -D options: PRECISION (0 sp, 1 dp,
// 2 dsp) and TILE. sp is compiled with -ftz=true -prec-div=false -prec-sqrt=false (numba-cuda's
// fastmath), dp and dsp with IEEE defaults; both compilers contract a * b + c into FMA. CUDA C
// never reassociates, so the double-single difference (hi_j - hi_i) + (lo_j - lo_i) keeps its
// order here as in numba.

#ifndef TILE
#define TILE 256
#endif
#ifndef PRECISION
#define PRECISION 0
#endif
// A block of more than 256 threads must fit the SM's 65536 registers; up to 256 threads leave
// ptxas free (a bound of 256 makes it cap some kernels at 32 registers and spill).
#if TILE > 256
#define BOUNDS __launch_bounds__(TILE)
#else
#define BOUNDS
#endif

// ---------------------------------------------------------------- the records
// load_target: a target's position; separation: body minus target; mass: the body's mass.

#if PRECISION == 2
typedef float real;
struct __align__(16) body { float4 hi; float4 lo; };
struct target { float xh, yh, zh, xl, yl, zl; };

__device__ __forceinline__ target load_target(const body* pos, int i)
{
    body b = pos[i];
    target t = {b.hi.x, b.hi.y, b.hi.z, b.lo.x, b.lo.y, b.lo.z};
    return t;
}

__device__ __forceinline__ void separation(const body& b, const target& t, real& dx, real& dy, real& dz)
{
    dx = (b.hi.x - t.xh) + (b.lo.x - t.xl);          // order matters: hi and lo differences first
    dy = (b.hi.y - t.yh) + (b.lo.y - t.yl);
    dz = (b.hi.z - t.zh) + (b.lo.z - t.zl);
}

__device__ __forceinline__ real mass(const body& b) { return b.hi.w; }
#else
#if PRECISION == 1
typedef double real;
struct __align__(16) body { double x, y, z, w; };
#else
typedef float real;
typedef float4 body;
#endif
struct target { real x, y, z; };

__device__ __forceinline__ target load_target(const body* pos, int i)
{
    body b = pos[i];
    target t = {b.x, b.y, b.z};
    return t;
}

__device__ __forceinline__ void separation(const body& b, const target& t, real& dx, real& dy, real& dz)
{
    dx = b.x - t.x;
    dy = b.y - t.y;
    dz = b.z - t.z;
}

__device__ __forceinline__ real mass(const body& b) { return b.w; }
#endif

// ---------------------------------------------------------------- one pair interaction
// flops per interaction: core/vocabulary.py FLOPS_PER_LINE (20)

#if PRECISION == 1
// r^-3 from a float32 1/sqrt seed (MUFU.RSQ) and one third-order step in float64, as the CPU
// kernel does (serial/kernels.py): e = 1 - r2 s^2, r^-3 = s^3 (1 + 3/2 e + 15/8 e^2); relative
// error ~e^3 ~ 1e-21, i.e. float64 rounding. Needs r2 within float32 range (softening > 0).
__device__ __forceinline__ double inverse_cube(double r2)
{
    double s = (double)rsqrtf((float)r2);
    double s2 = s * s;
    double e = fma(-r2, s2, 1.0);
    return (s2 * s) * fma(e, fma(e, 1.875, 1.5), 1.0);
}
#else
__device__ __forceinline__ float inverse_cube(float r2)
{
    float rinv = rsqrtf(r2);
    return rinv * rinv * rinv;
}
#endif

__device__ __forceinline__ void pair(const body& b, const target& t, real eps2, real& ax, real& ay, real& az)
{
    real dx, dy, dz;
    separation(b, t, dx, dy, dz);
    real r2 = fma(dz, dz, fma(dy, dy, fma(dx, dx, eps2)));
    real f = mass(b) * inverse_cube(r2);
    ax = fma(f, dx, ax);
    ay = fma(f, dy, ay);
    az = fma(f, dz, az);
}

// ---------------------------------------------------------------- the two source loops

__device__ __forceinline__ void tiled_sum(const body* __restrict__ pos, int npad, real eps2, const target& t,
                                          real& ax, real& ay, real& az)
{
    __shared__ body sh[TILE];
    for (int base = 0; base < npad; base += TILE) {
        sh[threadIdx.x] = pos[base + threadIdx.x];
        __syncthreads();
#pragma unroll 8
        for (int k = 0; k < TILE; ++k)
            pair(sh[k], t, eps2, ax, ay, az);
        __syncthreads();
    }
}

// the same order of sources, tile by tile (npad is a multiple of TILE: the loop unrolls as above)
__device__ __forceinline__ void plain_sum(const body* __restrict__ pos, int npad, real eps2, const target& t,
                                          real& ax, real& ay, real& az)
{
    for (int base = 0; base < npad; base += TILE) {
#pragma unroll 8
        for (int k = 0; k < TILE; ++k)
            pair(pos[base + k], t, eps2, ax, ay, az);
    }
}

// ---------------------------------------------------------------- kernels
// Thread t of block b handles target i = start + b * TILE + t; targets i >= stop (the slice's
// padding) compute on body stop - 1, take part in every barrier and write nothing.
// KIND_sum(...) is the sum of kernel KIND: tiled or plain (options.py KERNEL_KINDS).

#define KERNEL_HEAD(KIND)                                                       \
    const long long i = start + (long long)blockIdx.x * TILE + threadIdx.x;    \
    const target t = load_target(pos, (int)(i < stop ? i : stop - 1));         \
    const long long nslice = stop - start;                                     \
    real ax = 0, ay = 0, az = 0;                                               \
    KIND##_sum(pos, npad, eps2, t, ax, ay, az);

// pairwise_tiled, pairwise_plain (options.py entry_name)
#define PAIRWISE_KERNEL(KIND)                                                   \
    extern "C" __global__ void BOUNDS                                           \
    pairwise_##KIND(const body* __restrict__ pos, int npad, real eps2, long long start, long long stop, \
                    real* out)                                                  \
    {                                                                           \
        KERNEL_HEAD(KIND)                                                       \
        if (i < stop) {                                                         \
            out[i - start] = ax;                                                \
            out[nslice + i - start] = ay;                                       \
            out[2 * nslice + i - start] = az;                                   \
        }                                                                       \
    }

PAIRWISE_KERNEL(tiled)
PAIRWISE_KERNEL(plain)
