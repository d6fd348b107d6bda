"""Allen & Santillan (1991) acceleration at one point, in plain `math`.

This is kernel source, not a kernel: `serial/kernels.py` compiles it with numba for the CPU
and `gpu_full/fused_numba.py` compiles it as a CUDA device function, so the galactic force is
written once for both numba targets (the CuPy backend's CUDA C copy is `as91` in
`gpu_full/fused.cu`). Input and output are in cluster units; `length_scale`
(cluster radii -> kpc) and `accel_scale` ((10 km/s)^2/kpc -> cluster units) come from
`Units`. Double precision throughout: the field is smooth and O(N) work.
The NumPy reference it is validated against is `nbsymple_versions/core/galaxy.py`.
"""
import math

from .galaxy import A2, A3, B1, B2, HALO_CUTOFF, HALO_GAMMA, M1, M2, M3


def as91_acceleration(x, y, z, length_scale, accel_scale):
    """Acceleration (ax, ay, az) in cluster units at (x, y, z) in cluster units."""
    x = x * length_scale
    y = y * length_scale
    z = z * length_scale
    r2 = x * x + y * y + z * z
    bulge = -M1 / (math.sqrt(r2 + B1 * B1) * (r2 + B1 * B1))
    zb = math.sqrt(z * z + B2 * B2)
    s = A2 + zb
    d2 = x * x + y * y + s * s
    disk = -M2 / (math.sqrt(d2) * d2)
    r = math.sqrt(r2)
    halo = 0.0
    if r > 0.0:
        u = min(r, HALO_CUTOFF) / A3
        q = u / r           # M(r) / r^3 without r^3, which underflows within 1e-108 kpc (a hunt: inf)
        halo = -M3 * (q * q * q) * u ** (HALO_GAMMA - 2.0) / (1.0 + u ** HALO_GAMMA)
    fxy = (bulge + disk + halo) * accel_scale
    fz = (bulge + disk * s / zb + halo) * accel_scale
    return fxy * x, fxy * y, fz * z
