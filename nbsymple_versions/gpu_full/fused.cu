// Version E's fused kernels in CUDA C: C's pairwise sum (gpu_pairwise/nbody.cu, compiled just
// before this file: its records, sums and KERNEL_HEAD) plus the Allen & Santillan (1991) field
// at the target, in float64, written as float64. The AS91_* constants come from
// core/galaxy.py as -D options (fused.py).

// the target's position in float64: the galaxy sees hi + lo for dsp
#if PRECISION == 2
__device__ __forceinline__ void target_position(const target& t, double& x, double& y, double& z)
{
    x = (double)t.xh + (double)t.xl;
    y = (double)t.yh + (double)t.yl;
    z = (double)t.zh + (double)t.zl;
}
#else
__device__ __forceinline__ void target_position(const target& t, double& x, double& y, double& z)
{
    x = (double)t.x;
    y = (double)t.y;
    z = (double)t.z;
}
#endif

// ---------------------------------------------------------------- Allen & Santillan (1991)
// core/as91.py in CUDA C: cluster units in and out, float64.

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
        double q = u / r;              // M(r) / r^3 without r^3, which underflows within 1e-108 kpc
        halo = -AS91_M3 * (q * q * q) * pow(u, AS91_HALO_GAMMA - 2.0) / (1.0 + pow(u, AS91_HALO_GAMMA));
    }
    double fxy = (bulge + disk + halo) * accel_scale;
    double fz = (bulge + disk * s / zb + halo) * accel_scale;
    gx = fxy * x;
    gy = fxy * y;
    gz = fz * z;
}

// ---------------------------------------------------------------- kernels
// fused_tiled, fused_plain (fused.py GALAXY.name, options.py entry_name)

#define FUSED_KERNEL(KIND)                                                      \
    extern "C" __global__ void BOUNDS                                           \
    fused_##KIND(const body* __restrict__ pos, int npad, real eps2, double length_scale, double accel_scale, \
                 long long start, long long stop, double* out)                  \
    {                                                                           \
        KERNEL_HEAD(KIND)                                                       \
        if (i < stop) {                                                         \
            double x, y, z, gx, gy, gz;                                         \
            target_position(t, x, y, z);                                        \
            as91(x, y, z, length_scale, accel_scale, gx, gy, gz);               \
            out[i - start] = (double)ax + gx;                                   \
            out[nslice + i - start] = (double)ay + gy;                          \
            out[2 * nslice + i - start] = (double)az + gz;                      \
        }                                                                       \
    }

FUSED_KERNEL(tiled)
FUSED_KERNEL(plain)
