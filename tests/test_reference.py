"""The float64 NumPy reference and the one W (`diagnostics.potential_energy`): analytic two-body
case, Newton's third law, softening limits, chunking."""
import numpy as np
import pytest

from nbsymple_versions.core import diagnostics, reference


def test_two_body_analytic():
    eps, d, m1, m2 = 0.01, 0.3, 2.0, 0.5
    pos = np.array([[0.1, -0.2, 0.3], [0.1 + d, -0.2, 0.3]])
    acc = reference.pairwise_acceleration(pos, np.array([m1, m2]), eps)
    f = 1.0 / (d * d + eps * eps) ** 1.5
    np.testing.assert_allclose(acc, [[m2 * d * f, 0, 0], [-m1 * d * f, 0, 0]], rtol=1e-14, atol=0)
    w = diagnostics.potential_energy(pos, np.array([m1, m2]), eps)
    assert w == pytest.approx(-m1 * m2 / np.sqrt(d * d + eps * eps), rel=1e-14)


@pytest.mark.parametrize("masses", ["equal", "unequal"])
def test_newton_third_law(rng, masses):
    n = 300
    pos = rng.normal(size=(n, 3))
    m = np.full(n, 1.0 / n) if masses == "equal" else rng.random(n) ** 3
    acc = reference.pairwise_acceleration(pos, m, 1e-3)
    total_force = m @ acc
    assert np.linalg.norm(total_force) < 1e-13 * (m @ np.linalg.norm(acc, axis=1))


def test_softening_limits(rng):
    n = 50
    pos, m = rng.normal(size=(n, 3)), rng.random(n)
    # eps -> 0: Newtonian sum over j != i
    d = pos[None, :, :] - pos[:, None, :]
    r = np.linalg.norm(d, axis=2)
    np.fill_diagonal(r, np.inf)
    newton = np.einsum("ij,ijk->ik", m[None, :] / r**3, d)
    np.testing.assert_allclose(reference.pairwise_acceleration(pos, m, 1e-9), newton, rtol=1e-9, atol=1e-12)
    # eps >> separations: harmonic, a_i = sum_j m_j (x_j - x_i) / eps^3
    eps = 1e4
    harmonic = (m @ pos - m.sum() * pos) / eps**3
    np.testing.assert_allclose(reference.pairwise_acceleration(pos, m, eps), harmonic, rtol=1e-6,
                               atol=1e-6 * np.abs(harmonic).max())   # r^2/eps^2 ~ 1e-8 corrections


def test_chunking_does_not_change_the_answer(monkeypatch, rng):
    pos, m = rng.normal(size=(257, 3)), rng.random(257)
    whole = reference.pairwise_acceleration(pos, m, 1e-2)
    monkeypatch.setattr(reference, "_CHUNK_ELEMENTS", 257 * 7)
    np.testing.assert_allclose(reference.pairwise_acceleration(pos, m, 1e-2), whole, rtol=1e-13, atol=0)
    w = diagnostics.potential_energy(pos, m, 1e-2)
    monkeypatch.setattr(diagnostics, "CHUNK_PAIRS", 257 * 7)
    assert diagnostics.potential_energy(pos, m, 1e-2) == pytest.approx(w, rel=1e-13)


@pytest.mark.parametrize("n", [1, 7, 257])
def test_chunks_cover_every_target_once(monkeypatch, n):
    """The chunks of targets are consecutive and cover 0 .. n-1 exactly once at any chunk size (a
    mutation hunt: a chunk one row short left rows of np.empty, which passed the chunking test
    above, whose freed temporaries held the right answer where the skipped rows were allocated)."""
    for elements in (1, n, 7 * n, 7 * n + 3, 1 << 21):
        monkeypatch.setattr(reference, "_CHUNK_ELEMENTS", elements)
        rows = [i for s in reference._chunks(n) for i in range(n)[s]]
        assert rows == list(range(n)), elements
