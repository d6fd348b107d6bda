// Pairwise gravitational accelerations in CUDA C: the CuPy backend's kernels
// (kernels/cupy_backend.py) and the instruction-count yardstick of `nbsymple gpu-asm`.
//
// The same algorithm as the numba-cuda kernels of kernels/cuda.py, line for line:
//   tiled   one thread per target; each tile of TILE sources is loaded into shared memory by
//           the block (one body per thread), __syncthreads, every thread sums the tile's pull,
//           __syncthreads (GPU Gems 3, ch. 31). Every thread reaches every barrier: threads past
//           the end of the slice load, wait and compute on a clamped target, and write nothing.
//   plain   one thread per target reading every source straight from global memory (through
//           L1): no shared memory, no barrier.
//   fused_* version E: the pairwise sum plus the Allen & Santillan (1991) field at the target,
//           in float64, written as float64.
//
// Bodies (padded with zero-mass bodies at the origin to a multiple of TILE), one record each:
//   sp   float4 (x, y, z, m)
//   dp   double (x, y, z, m), 16-byte aligned (two 128-bit loads)
//   dsp  float4 hi (xh, yh, zh, m) and float4 lo (xl, yl, zl, 0): x = xh + xl (kernels/dsp.py)
// Output: 3 rows of (stop - start) accelerations, row-major.
//
// Compile-time parameters, given by cupy_backend.py as -D options: PRECISION (0 sp, 1 dp,
// 2 dsp), TILE, and the AS91_* constants (from core/galaxy.py). sp is compiled with
// -ftz=true -prec-div=false -prec-sqrt=false (numba-cuda's fastmath), dp and dsp with IEEE
// defaults; both compilers contract a * b + c into FMA. CUDA C never reassociates, so the
// double-single difference (hi_j - hi_i) + (lo_j - lo_i) keeps its order here as in numba.

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

#if PRECISION == 1
typedef double real;
struct __align__(16) body { double x, y, z, m; };
struct target { double x, y, z; };
#elif PRECISION == 2
typedef float real;
struct __align__(16) body { float4 hi; float4 lo; };
struct target { float xh, yh, zh, xl, yl, zl; };
#else
typedef float real;
typedef float4 body;
struct target { float x, y, z; };
#endif

// ---------------------------------------------------------------- one pair interaction
// flops per interaction: core/vocabulary.py FLOPS_PER_LINE (20)

#if PRECISION == 1
// r^-3 from a float32 1/sqrt seed (MUFU.RSQ) and one third-order step in float64, as the CPU
// kernel does (kernels/cpu.py): e = 1 - r2 s^2, r^-3 = s^3 (1 + 3/2 e + 15/8 e^2); relative
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

#if PRECISION == 2
__device__ __forceinline__ target load_target(const body* pos, int i)
{
    body b = pos[i];
    target t = {b.hi.x, b.hi.y, b.hi.z, b.lo.x, b.lo.y, b.lo.z};
    return t;
}

__device__ __forceinline__ void pair(const body& b, const target& t, real eps2, real& ax, real& ay, real& az)
{
    real dx = (b.hi.x - t.xh) + (b.lo.x - t.xl);     // order matters: hi and lo differences first
    real dy = (b.hi.y - t.yh) + (b.lo.y - t.yl);
    real dz = (b.hi.z - t.zh) + (b.lo.z - t.zl);
    real r2 = fmaf(dz, dz, fmaf(dy, dy, fmaf(dx, dx, eps2)));
    real f = b.hi.w * inverse_cube(r2);
    ax = fmaf(f, dx, ax);
    ay = fmaf(f, dy, ay);
    az = fmaf(f, dz, az);
}

__device__ __forceinline__ void target_position(const target& t, double& x, double& y, double& z)
{
    x = (double)t.xh + (double)t.xl;                 // the galaxy sees hi + lo in float64
    y = (double)t.yh + (double)t.yl;
    z = (double)t.zh + (double)t.zl;
}
#else
__device__ __forceinline__ target load_target(const body* pos, int i)
{
    body b = pos[i];
    target t = {b.x, b.y, b.z};
    return t;
}

__device__ __forceinline__ void pair(const body& b, const target& t, real eps2, real& ax, real& ay, real& az)
{
    real dx = b.x - t.x;
    real dy = b.y - t.y;
    real dz = b.z - t.z;
    real r2 = fma(dz, dz, fma(dy, dy, fma(dx, dx, eps2)));
#if PRECISION == 1
    real f = b.m * inverse_cube(r2);
#else
    real f = b.w * inverse_cube(r2);
#endif
    ax = fma(f, dx, ax);
    ay = fma(f, dy, ay);
    az = fma(f, dz, az);
}

__device__ __forceinline__ void target_position(const target& t, double& x, double& y, double& z)
{
    x = (double)t.x;
    y = (double)t.y;
    z = (double)t.z;
}
#endif

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

// ---------------------------------------------------------------- Allen & Santillan (1991)
// kernels/as91.py in CUDA C: cluster units in and out, float64.

__device__ void as91(double x, double y, double z, double length_scale, double accel_scale,
                     double& gx, double& gy, double& gz)
{
    x *= length_scale;
    y *= length_scale;
    z *= length_scale;
    double r2 = x * x + y * y + z * z;
    double bulge = -AS91_M1 / (sqrt(r2 + AS91_B1 * AS91_B1) * (r2 + AS91_B1 * AS91_B1));
    double zb = sqrt(z * z + AS91_B2 * AS91_B2);
    double s = AS91_A2 + zb;
    double d2 = x * x + y * y + s * s;
    double disk = -AS91_M2 / (sqrt(d2) * d2);
    double r = sqrt(r2);
    double halo = 0.0;
    if (r > 0.0) {
        double u = fmin(r, AS91_HALO_CUTOFF) / AS91_A3;
        halo = -AS91_M3 * pow(u, 1.0 + AS91_HALO_GAMMA) / (1.0 + pow(u, AS91_HALO_GAMMA)) / (r2 * r);
    }
    double fxy = (bulge + disk + halo) * accel_scale;
    double fz = (bulge + disk * s / zb + halo) * accel_scale;
    gx = fxy * x;
    gy = fxy * y;
    gz = fz * z;
}

// ---------------------------------------------------------------- kernels
// Thread t of block b handles target i = start + b * TILE + t; targets i >= stop (the slice's
// padding) compute on body stop - 1, take part in every barrier and write nothing.

#define KERNEL_HEAD                                                             \
    const long long i = start + (long long)blockIdx.x * TILE + threadIdx.x;    \
    const target t = load_target(pos, (int)(i < stop ? i : stop - 1));         \
    const long long nslice = stop - start;                                     \
    real ax = 0, ay = 0, az = 0;

extern "C" __global__ void BOUNDS
pairwise_tiled(const body* __restrict__ pos, int npad, real eps2, long long start, long long stop, real* out)
{
    KERNEL_HEAD
    tiled_sum(pos, npad, eps2, t, ax, ay, az);
    if (i < stop) {
        out[i - start] = ax;
        out[nslice + i - start] = ay;
        out[2 * nslice + i - start] = az;
    }
}

extern "C" __global__ void BOUNDS
pairwise_plain(const body* __restrict__ pos, int npad, real eps2, long long start, long long stop, real* out)
{
    KERNEL_HEAD
    plain_sum(pos, npad, eps2, t, ax, ay, az);
    if (i < stop) {
        out[i - start] = ax;
        out[nslice + i - start] = ay;
        out[2 * nslice + i - start] = az;
    }
}

#define FUSED_TAIL                                                              \
    if (i < stop) {                                                             \
        double x, y, z, gx, gy, gz;                                             \
        target_position(t, x, y, z);                                            \
        as91(x, y, z, length_scale, accel_scale, gx, gy, gz);                   \
        out[i - start] = (double)ax + gx;                                       \
        out[nslice + i - start] = (double)ay + gy;                              \
        out[2 * nslice + i - start] = (double)az + gz;                          \
    }

extern "C" __global__ void BOUNDS
fused_tiled(const body* __restrict__ pos, int npad, real eps2, double length_scale, double accel_scale,
            long long start, long long stop, double* out)
{
    KERNEL_HEAD
    tiled_sum(pos, npad, eps2, t, ax, ay, az);
    FUSED_TAIL
}

extern "C" __global__ void BOUNDS
fused_plain(const body* __restrict__ pos, int npad, real eps2, double length_scale, double accel_scale,
            long long start, long long stop, double* out)
{
    KERNEL_HEAD
    plain_sum(pos, npad, eps2, t, ax, ay, az);
    FUSED_TAIL
}
