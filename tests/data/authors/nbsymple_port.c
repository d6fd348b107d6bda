/*
 * A CPU re-implementation of the authors' NBSymple v1.0 SI6A run ("make S=yes" of
 * github.com/alessandramb/NBSymple), made to produce this folder's fixture; README.md says how
 * and why. It is written anew, not copied: every floating-point operation follows their source
 * in the same order (same products, sums and divisions, same loop order), so that it computes
 * what their code computes, in double.
 *
 * Their arithmetic it follows:
 * - initial conditions as particle.cu draws them (genInitialConditions, equalMasses,
 *   normalization): N - 1 stars of 1 Msun and a central 1 Msun "black hole", positions and
 *   velocities by rejection in the sphere of radius 1/2 from rand(), scaled to radius 1 and
 *   virial ratio 0.05 (without the hole), placed at 8500 pc / r_cl moving at 220 km/s with their
 *   velocity unit sqrt(G M / r_cl) from G = 6.67259e-11, Msun = 1.989e30 kg, pc = 3.086e16 m;
 *   printed as their Data/sixth0.txt ("%+.8e": scientific, showpos, setprecision(8));
 * - an initial-condition file read as their EXT_DATA reader reads Data/ExtData.txt;
 * - SI6A as sixth.cu steps it: 8 drifts x += (C_l v) h, each but the last followed by the
 *   force at the drifted positions and a kick v += (D_l h) a, with their 15-digit C_l, D_l;
 * - the force as their kernel (nbody.h, POTENTIAL defined) sums it for body i: the Allen &
 *   Santillan Galaxy first, with masses 1.40592e10, 8.5608e10 and 10.7068e10 Msun (AS91's in
 *   units of 2.32e7 Msun) divided by M and lengths 387.3, 5317.8, 250, 12000 pc divided by r_cl,
 *   then the softened pairs j = 0 .. N-1 in order (j = i adds zero), eps = 0.005 times the mean
 *   distance 2 (3N / 4 pi)^(-1/3);
 * - energy and angular momentum as particle.h sums them, printed to stderr.
 *
 * Where it differs: "run in double". Their S build keeps the pair separation, r^2, r^-3 and
 * the pair term in float, the softening in float, and the Galaxy through float powf/sqrtf; here
 * all of these are double (kreal), unless compiled with -DFLOAT_KERNEL, which makes them float
 * again (with glibc's powf/sqrtf, not CUDA's: near, not equal, to their GPU's roundings). One
 * CPU thread does what their GPU threads do, body by body. srand(SEED) replaces srand(time(0)).
 * Input as their input.txt: N = 480, h = 0.001, r_cl = 10 pc, M = 480 Msun, beta = 0.
 *
 *   cc -O2 -ffp-contract=off -o nbsymple_port nbsymple_port.c -lm
 *   ./nbsymple_port ics 2026 > sixth0.txt                  their sixth0.txt, seed 2026
 *   ./nbsymple_port run sixth0.txt 100 > after_100_steps.txt   100 steps, 17 digits
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#ifdef FLOAT_KERNEL
typedef float kreal;
#define KSQRT sqrtf
#define KPOW powf
#else
typedef double kreal;
#define KSQRT sqrt
#define KPOW pow
#endif

enum { NB = 480 };                         /* bodies; the last is the "black hole" */
static const double SOFTENING_FACTOR = 0.005;
static const double STEP = 0.001, R_CL_PC = 10.0, BH_MSUN = 1.0, BETA = 0.0;
static double cluster_msun = 480.0;

static double x[NB][3], v[NB][3], m[NB], xs[NB][3], acc[NB][3];
static double eps;

static double softening(void)
{
  return SOFTENING_FACTOR * (2. * pow(3. * NB / (4. * M_PI), -1. / 3.));
}

static double pair_distance(int i, int j)   /* softened |x_i - x_j| as their host code sums it */
{
  double dx = x[i][0] - x[j][0], dy = x[i][1] - x[j][1], dz = x[i][2] - x[j][2];
  return sqrt(dx * dx + dy * dy + dz * dz + eps * eps);
}

static double kinetic(int count)
{
  double k = 0.;
  for (int i = 0; i < count; i++)
    k += m[i] * (v[i][0] * v[i][0] + v[i][1] * v[i][1] + v[i][2] * v[i][2]);
  return .5 * k;
}

/* ------------------------------------------------------------------ initial conditions */

static void draw_in_half_ball(double out[][3])
{
  for (int i = 0; i < NB - 1; ) {
    double a = (double)rand() / ((double)RAND_MAX) - .5;
    double b = (double)rand() / ((double)RAND_MAX) - .5;
    double c = (double)rand() / ((double)RAND_MAX) - .5;
    if (a * a + b * b + c * c < .25) {
      out[i][0] = a; out[i][1] = b; out[i][2] = c;
      i++;
    }
  }
}

static void remove_mean_velocity(void)      /* of the stars, the hole's share included */
{
  int h = NB - 1;
  double mean[3] = {0., 0., 0.};
  for (int i = 0; i < h; i++)
    for (int k = 0; k < 3; k++)
      mean[k] += v[i][k] * m[i];
  for (int k = 0; k < 3; k++) {
    mean[k] /= (1. - m[h]);
    mean[k] += v[h][k] * m[h] / (1. - m[h]);
  }
  for (int i = 0; i < h; i++)
    for (int k = 0; k < 3; k++)
      v[i][k] -= mean[k];
}

static void make_cluster(unsigned seed)
{
  int h = NB - 1;
  srand(seed);
  draw_in_half_ball(x);
  draw_in_half_ball(v);

  double total = 0.;
  for (int i = 0; i < h; i++) { m[i] = 1.; total += m[i]; }
  m[h] = BH_MSUN;
  total += m[h];
  cluster_msun = 0.;
  for (int i = 0; i < NB; i++) cluster_msun += m[i];

  double centre[3] = {0., 0., 0.};            /* of the stars; the hole sits on it */
  for (int i = 0; i < h; i++)
    for (int k = 0; k < 3; k++)
      centre[k] += x[i][k] * m[i] / (cluster_msun - m[h]);
  for (int k = 0; k < 3; k++) x[h][k] = centre[k];
  double r2max = 0.;
  for (int i = 0; i < NB; i++) {
    for (int k = 0; k < 3; k++) x[i][k] -= centre[k];
    double r2 = x[i][0] * x[i][0] + x[i][1] * x[i][1] + x[i][2] * x[i][2];
    if (r2 > r2max) r2max = r2;
  }
  double rmax = sqrt(r2max);
  for (int i = 0; i < NB; i++) {
    for (int k = 0; k < 3; k++) x[i][k] /= rmax;
    m[i] /= cluster_msun;
  }

  double velocity_unit = sqrt(6.67259e-11 * cluster_msun * 1.989e30 / (R_CL_PC * 3.086e16));   /* m/s */
  double orbit_speed = 220000. / velocity_unit;
  eps = softening();

  double hole_potential = 0.;
  for (int i = 0; i < h; i++) hole_potential += m[i] / pair_distance(i, h);
  double escape = sqrt(2 * hole_potential);
  double theta = M_PI * .5, phi = M_PI * .5;
  v[h][0] = BETA * escape * sin(theta) * cos(phi);
  v[h][1] = BETA * escape * sin(theta) * sin(phi);
  v[h][2] = BETA * escape * cos(theta);
  remove_mean_velocity();

  double w = 0.;                              /* the stars' potential energy, the hole left out */
  for (int i = 1; i < h; i++)
    for (int j = 0; j <= i - 1; j++)
      w -= m[i] * m[j] / pair_distance(i, j);
  double q = 2. * kinetic(h) / fabs(w);
  if (q > .05) {
    double s = sqrt(.05 / q);
    for (int i = 0; i < h; i++)
      for (int k = 0; k < 3; k++) v[i][k] *= s;
  }
  remove_mean_velocity();

  for (int i = 0; i < NB; i++) {
    x[i][0] += (8500. / R_CL_PC);
    v[i][1] += orbit_speed;
  }
}

static void read_bodies(const char *path)
{
  FILE *f = fopen(path, "r");
  if (!f) { fprintf(stderr, "%s cannot be read\n", path); exit(1); }
  for (int i = 0; i < NB; i++)
    if (fscanf(f, "%lf %lf %lf %lf %lf %lf %lf", &x[i][0], &x[i][1], &x[i][2], &v[i][0], &v[i][1], &v[i][2],
               &m[i]) != 7) {
      fprintf(stderr, "%s: line %d is not x y z vx vy vz m\n", path, i + 1);
      exit(1);
    }
  fclose(f);
  eps = softening();
}

static void print_bodies(int digits)
{
  for (int i = 0; i < NB; i++)
    printf("%+.*e %+.*e %+.*e %+.*e %+.*e %+.*e %+.*e\n", digits, x[i][0], digits, x[i][1], digits, x[i][2],
           digits, v[i][0], digits, v[i][1], digits, v[i][2], digits, m[i]);
}

/* ------------------------------------------------------------------ forces (their kernel) */

static void galaxy(const double *p, double *a)
{
  float mass = (float)cluster_msun, radius = (float)R_CL_PC;    /* their kernel's float arguments */
  double m_bulge = 1.40592e10 / mass, b_bulge = 387.3 / radius;
  double m_disk = 8.5608e10 / mass, a_disk = 5317.8 / radius, b_disk = 250.0 / radius;
  double m_halo = 10.7068e10 / mass, a_halo = 12000.0 / radius;

  double R2 = p[0] * p[0] + p[1] * p[1];
  double r2 = p[0] * p[0] + p[1] * p[1] + p[2] * p[2];
  double r = KSQRT(r2);

  kreal bulge = KPOW((r2 + b_bulge * b_bulge), 1.5);     /* kreal: the type of their powf's result */
  for (int k = 0; k < 3; k++) a[k] = -m_bulge * p[k] / bulge;

  kreal zb = KSQRT(b_disk * b_disk + p[2] * p[2]);
  kreal disk = KPOW(R2 + (a_disk + sqrt(b_disk * b_disk + p[2] * p[2])) * (a_disk + zb), 1.5);
  kreal disk_z = KPOW(R2 + (a_disk + zb) * (a_disk + zb), 1.5);
  a[0] -= m_disk * p[0] / disk;
  a[1] -= m_disk * p[1] / disk;
  a[2] -= m_disk * p[2] * (a_disk + zb) / (zb * disk_z);     /* in float, where theirs is */

  kreal rise = KPOW(r / a_halo, 0.02);
  double mass_law = (a_halo * a_halo) * r * (1. + KPOW(r / a_halo, 1.02));
  for (int k = 0; k < 3; k++) a[k] -= m_halo * p[k] * rise / mass_law;
}

static void forces(void)
{
  kreal density = 3 * NB / (4 * M_PI);
  kreal mean_distance = 2 * KPOW(density, -1. / 3.);
  kreal eps_k = SOFTENING_FACTOR * mean_distance;
  for (int i = 0; i < NB; i++) {
    double a[3];
    galaxy(xs[i], a);
    for (int j = 0; j < NB; j++) {
      kreal rx = xs[j][0] - xs[i][0], ry = xs[j][1] - xs[i][1], rz = xs[j][2] - xs[i][2];
      kreal d2 = rx * rx + ry * ry + rz * rz + eps_k * eps_k;
      kreal d6 = d2 * d2 * d2;
      kreal inv3 = 1.0 / KSQRT(d6);
      kreal s = m[j] * inv3;
      a[0] += rx * s;
      a[1] += ry * s;
      a[2] += rz * s;
    }
    for (int k = 0; k < 3; k++) acc[i][k] = a[k];
  }
}

/* ------------------------------------------------------------------ SI6A and diagnostics */

static const double DRIFT[8] = {0.392256805238780, 0.510043411918458, -0.471053385409758, 0.0687531682525198,
                                0.0687531682525198, -0.471053385409758, 0.510043411918458, 0.392256805238780};
static const double KICK[8] = {0.784513610477560, 0.235573213359357, -1.17767998417887, 1.31518632068391,
                               -1.17767998417887, 0.235573213359357, 0.784513610477560, 0.};

static double energy(void)                  /* kinetic + pairs + Galaxy, in cluster units */
{
  double w = 0.;
  for (int i = 0; i < NB; i++)
    for (int j = 0; j <= i - 1; j++)
      w -= m[i] * m[j] / pair_distance(i, j);
  double m_bulge = 1.40592e10 / cluster_msun, m_disk = 8.56080e10 / cluster_msun, m_halo = 10.70680e10 / cluster_msun;
  double b_bulge = 387.3 / R_CL_PC, a_disk = 5317.8 / R_CL_PC, b_disk = 250.0 / R_CL_PC, a_halo = 12000.0 / R_CL_PC;
  double bulge = 0., disk = 0., halo = 0.;
  for (int i = 0; i < NB; i++) {
    double r = sqrt(x[i][0] * x[i][0] + x[i][1] * x[i][1] + x[i][2] * x[i][2]);
    double s = a_disk + sqrt(x[i][2] * x[i][2] + b_disk * b_disk);
    bulge -= m[i] / sqrt(r * r + b_bulge * b_bulge);
    disk -= m[i] / sqrt(x[i][0] * x[i][0] + x[i][1] * x[i][1] + s * s);
    halo += m[i] * (log(1 + pow(r / a_halo, 1.02)) - 3.186322775);
  }
  bulge *= m_bulge;
  disk *= m_disk;
  halo *= m_halo / (1.02 * a_halo);
  return kinetic(NB) + (w + (bulge + disk + halo));
}

static double angular_momentum(void)
{
  double l[3] = {0., 0., 0.};
  for (int i = 0; i < NB; i++) {
    l[0] += m[i] * (x[i][1] * v[i][2] - x[i][2] * v[i][1]);
    l[1] -= m[i] * (x[i][0] * v[i][2] - x[i][2] * v[i][0]);
    l[2] += m[i] * (x[i][0] * v[i][1] - x[i][1] * v[i][0]);
  }
  return sqrt(l[0] * l[0] + l[1] * l[1] + l[2] * l[2]);
}

static void integrate(int steps)
{
  double e0 = energy(), l0 = angular_momentum();
  for (int step = 1; step <= steps; step++)
    for (int l = 0; l < 8; l++) {
      for (int i = 0; i < NB; i++)
        for (int k = 0; k < 3; k++)
          xs[i][k] = x[i][k] + DRIFT[l] * v[i][k] * STEP;
      if (l != 7)
        forces();
      for (int i = 0; i < NB; i++)
        for (int k = 0; k < 3; k++) {
          v[i][k] = v[i][k] + KICK[l] * STEP * acc[i][k];
          x[i][k] = xs[i][k];
        }
    }
  double e = energy(), l = angular_momentum();
  fprintf(stderr, "E0 = %.10g; E = %.10g; DE =(E-E0)/E0 = %.10g\n", e0, e, (e - e0) / fabs(e0));
  fprintf(stderr, "L0 = %.10g; L = %.10g; DL =(L-L0)/L0 = %.10g\n", l0, l, (l - l0) / fabs(l0));
}

int main(int argc, char **argv)
{
  if (argc == 3 && argv[1][0] == 'i') {
    make_cluster((unsigned)strtoul(argv[2], NULL, 10));
    print_bodies(8);
    return 0;
  }
  if (argc == 4 && argv[1][0] == 'r') {
    read_bodies(argv[2]);
    integrate(atoi(argv[3]));
    print_bodies(16);
    return 0;
  }
  fprintf(stderr, "usage: %s ics SEED > sixth0.txt | %s run FILE STEPS > after.txt\n", argv[0], argv[0]);
  return 2;
}
