"""The counted kernels' code kept on disk (`instruments/code_cache.py`): loaded where the key
matches, compiled again where it does not or the entry is damaged, compiled by one of two
processes that ask at once, and never kept without NUMBA_CACHE_DIR. The CPU kernels in numba's
cache (`serial/kernel_cache.py`) alike: a damaged file compiled again, one compile of two processes
(`serial/compile_lock.py`, whose lock both take)."""
import json
import os
from pathlib import Path
import shutil
import subprocess
import sys
import textwrap
import threading
import time

import numba
import pytest

from nbsymple_versions.instruments import code_cache
from nbsymple_versions.instruments.cpu_asm import toolchain
from nbsymple_versions.serial import compile_lock

KEY = {"sources": "abc", "target": "haswell"}


@pytest.fixture
def folder(tmp_path, monkeypatch):
    monkeypatch.setattr(numba.core.config, "CACHE_DIR", str(tmp_path / "numba"))
    return tmp_path / "numba" / code_cache.FOLDER


def kept_value(key=KEY):
    with code_cache.entry("x86", key) as kept:
        return kept.value


def test_kept_under_its_key_and_only_there(folder):
    with code_cache.entry("x86", KEY) as kept:
        assert kept.value is None
        kept.keep(["haswell", {"pairwise_sp": "vfmadd231ps"}])
    assert kept_value() == ["haswell", {"pairwise_sp": "vfmadd231ps"}]
    assert kept_value({**KEY, "sources": "abd"}) is None        # another digest: another entry
    assert len(list(folder.glob("x86-*.json"))) == 1


def test_nothing_kept_without_numba_cache_dir(tmp_path, monkeypatch):
    monkeypatch.setattr(numba.core.config, "CACHE_DIR", "")
    monkeypatch.chdir(tmp_path)
    with code_cache.entry("x86", KEY) as kept:
        kept.keep("code")
        assert kept.value == "code"
    assert kept_value() is None and list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("damage", ["garbage", "truncated", "other key", "fifo", "folder", "link"])
def test_a_damaged_entry_is_compiled_again_and_replaced(folder, damage, tmp_path):
    with code_cache.entry("x86", KEY) as kept:
        kept.keep("good")
    path, = folder.glob("x86-*.json")
    victim = tmp_path / "victim"
    victim.write_text("precious")
    whole = path.read_text()
    path.unlink()
    if damage == "garbage":
        path.write_bytes(b"\xff\x00not json")
    elif damage == "truncated":
        path.write_text(whole[: len(whole) // 2])
    elif damage == "other key":
        path.write_text(json.dumps({"key": {**KEY, "target": "znver4"}, "value": "wrong"}))
    elif damage == "fifo":
        os.mkfifo(path)
    elif damage == "folder":
        path.mkdir()
    else:
        path.symlink_to(victim)
    with code_cache.entry("x86", KEY) as kept:
        assert kept.value is None
        kept.keep("again")
    assert victim.read_text() == "precious"
    if damage != "folder":                     # a folder cannot be replaced: not kept, no error
        assert kept_value() == "again"


def test_a_cache_folder_that_cannot_hold_it_keeps_nothing(folder):
    folder.parent.mkdir(parents=True)
    folder.write_text("a file where the folder would be")
    with code_cache.entry("x86", KEY) as kept:
        kept.keep("code")
    assert kept.value == "code" and kept_value() is None


def test_the_second_asker_waits_and_loads_the_first_ones_code(folder):
    """Two askers at once (two processes' locks: separate open files): the second one's entry is
    opened after the first kept its code."""
    compiling, seen = threading.Event(), []

    def second():
        compiling.wait()
        with code_cache.entry("x86", KEY) as kept:
            seen.append(kept.value)

    other = threading.Thread(target=second)
    other.start()
    with code_cache.entry("x86", KEY) as kept:
        compiling.set()
        other.join(0.5)                        # it cannot enter while the lock is held
        assert other.is_alive() and seen == []
        kept.keep("compiled once")
    other.join()
    assert seen == ["compiled once"]


def test_a_long_wait_for_another_compile_is_said(folder, monkeypatch, capsys):
    """A hunt: `cpu-asm` waited up to 15 min without a word while another process holding the
    same entry was stopped (Ctrl-Z). After SAY_AFTER_S it says what it waits for, once."""
    monkeypatch.setattr(code_cache, "SAY_AFTER_S", 0.0)

    def second():
        with code_cache.entry("x86", KEY):
            pass
    said, deadline = "", time.monotonic() + 300          # a hang guard, not a timing
    with code_cache.entry("x86", KEY):
        other = threading.Thread(target=second)
        other.start()
        while "waiting for another process" not in said:  # held until the other has tried and said it, however
            assert other.is_alive() and time.monotonic() < deadline, said      # late a busy machine runs it
            other.join(0.05)
            said += capsys.readouterr().err
        other.join(0.3)                                  # still held: more tries, none of which says it again
        assert other.is_alive()
    other.join()
    err = said + capsys.readouterr().err
    assert err.count("waiting for another process that compiles the same code") == 1, err


def test_the_digest_follows_every_source_file_and_its_name(tmp_path, monkeypatch):
    package = tmp_path / "package"
    shutil.copytree(code_cache.PACKAGE / "core", package / "core")
    monkeypatch.setattr(code_cache, "PACKAGE", package)

    def digest():
        code_cache.sources_digest.cache_clear()
        return code_cache.sources_digest("core")

    first = digest()
    assert digest() == first
    (package / "core" / "notes.txt").write_text("not a source")
    assert digest() == first
    source = package / "core" / "units.py"
    source.write_text(source.read_text() + "\n# one more line\n")
    edited = digest()
    assert edited != first
    source.rename(package / "core" / "units2.py")
    assert digest() not in (first, edited)


def test_the_digest_follows_the_cuda_c_kernels(tmp_path, monkeypatch):
    """The CUDA C kernels (`.cu`) that gpu-asm compiles are sources of its digest: an edit of one is
    compiled again, not loaded (a mutation hunt: a digest of the .py files alone passed)."""
    package = tmp_path / "package"
    shutil.copytree(code_cache.PACKAGE / "gpu_pairwise", package / "gpu_pairwise")
    monkeypatch.setattr(code_cache, "PACKAGE", package)
    code_cache.sources_digest.cache_clear()
    try:
        first = code_cache.sources_digest("gpu_pairwise")
        kernel = package / "gpu_pairwise" / "nbody.cu"
        kernel.write_text(kernel.read_text() + "\n// one more line\n")
        code_cache.sources_digest.cache_clear()
        assert code_cache.sources_digest("gpu_pairwise") != first
    finally:
        code_cache.sources_digest.cache_clear()         # no digest of the copy left for later tests


def test_a_fixed_target_is_compiled_once_then_loaded(folder, monkeypatch):
    """cpu-asm's fixed target: the second ask starts no compiler and gives the same assembly;
    the host is never kept (its code follows this machine's CPU)."""
    first = toolchain.compile_targets(("haswell",))
    started = []
    real = toolchain._compile_in_children
    monkeypatch.setattr(toolchain, "_compile_in_children", lambda targets, host_cpu=None: started.append(
        list(targets)) or real(targets, host_cpu))
    again = toolchain.compile_targets(("host", "haswell"))
    assert started == [["host"]]
    assert again["haswell"] == first["haswell"] and again["haswell"][0] == "haswell"
    assert list(again) == ["host", "haswell"]


def test_a_numba_cuda_kernel_is_compiled_once_then_loaded(folder, monkeypatch):
    """gpu-asm's PTX of a numba-cuda kernel: loaded the second time; a NUMBA_ setting, which
    could change the code, is another entry."""
    from numba.cuda.core import config

    from nbsymple_versions.instruments.gpu_asm import toolchain as gpu
    if config.ENABLE_CUDASIM:
        pytest.skip("NUMBA_ENABLE_CUDASIM is set in this process: no real compiler")
    first = gpu.numba_ptx("sp", "tiled", 256, "sm_90")
    compiled = []
    real = gpu._compile_numba_ptx
    monkeypatch.setattr(gpu, "_compile_numba_ptx", lambda *args: compiled.append(args) or real(*args))
    assert gpu.numba_ptx("sp", "tiled", 256, "sm_90") == first and compiled == []
    monkeypatch.setenv("NUMBA_OPT", "2")
    assert gpu.numba_ptx("sp", "tiled", 256, "sm_90").startswith("//") and compiled == [("sp", "tiled", 256, "sm_90")]


# a kernel that scales one float (PTX for sm_80 assembles for sm_90 too): ptxas takes moments
TINY_PTX = """.version 7.0
.target sm_80
.address_size 64
.visible .entry scale(.param .u64 p, .param .f32 s)
{
    .reg .b64 %rd<3>;
    .reg .f32 %f<3>;
    ld.param.u64 %rd1, [p];
    ld.param.f32 %f1, [s];
    cvta.to.global.u64 %rd2, %rd1;
    ld.global.f32 %f2, [%rd2];
    mul.f32 %f2, %f2, %f1;
    st.global.f32 [%rd2], %f2;
    ret;
}
"""


def test_assembled_sass_is_kept_then_loaded_and_a_damaged_entry_assembled_again(folder, monkeypatch, tmp_path):
    """gpu-asm's ptxas and nvdisasm (3.5 s of a count): the second assembly of the same PTX starts
    neither and gives the same resources and SASS; another arch is another entry; an entry that
    is not what was kept (a module short, a register count that is text) is assembled again."""
    from nbsymple_versions.instruments.gpu_asm import toolchain as gpu
    ptx = [TINY_PTX]
    first = gpu.assemble_modules(ptx, "sm_80", tmp_path)
    started = []
    real = gpu._run
    monkeypatch.setattr(gpu, "_run", lambda args: started.append(os.path.basename(args[0])) or real(args))
    assert gpu.assemble_modules(ptx, "sm_80", tmp_path) == first and started == []
    assert gpu.assemble_modules(ptx, "sm_90", tmp_path) != first and started == ["ptxas", "nvdisasm"]
    entry = next(p for p in folder.glob("sass-*.json") if json.loads(p.read_text())["key"]["arch"] == "sm_80")
    kept = json.loads(entry.read_text())
    resources = kept["value"][0][0]
    name = next(iter(resources))
    for damaged in ([], [[{name: {**resources[name], "registers": "40"}}, kept["value"][0][1]]]):
        entry.write_text(json.dumps({**kept, "value": damaged}))
        started.clear()
        assert gpu.assemble_modules(ptx, "sm_80", tmp_path) == first and started == ["ptxas", "nvdisasm"]


NUMBA_DAMAGE = {"index cut short": ("*.nbi", lambda p: p.write_bytes(p.read_bytes()[:20])),
                "index a FIFO": ("*.nbi", lambda p: (p.unlink(), os.mkfifo(p))),
                "data cut short": ("*.nbc", lambda p: p.write_bytes(p.read_bytes()[:100])),
                "data a folder": ("*.nbc", lambda p: (p.unlink(), p.mkdir()))}


@pytest.fixture(scope="module")
def numba_cache(tmp_path_factory):
    """numba's cache of the kernels of version A, as `nbsymple run` keeps it in NUMBA_CACHE_DIR."""
    folder = tmp_path_factory.mktemp("kernels") / "numba"
    p = _run_a(folder)
    assert p.returncode == 0 and list(folder.rglob("*.nbi")) and list(folder.rglob("*.nbc")), p.stderr
    return folder


def _run_a(folder):
    env = {**{k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}, "NUMBA_CACHE_DIR": str(folder)}
    return subprocess.run([sys.executable, "-m", "nbsymple_versions.cli", "run", "--n", "8", "--steps", "1"],
                          capture_output=True, text=True, env=env, timeout=600)


@pytest.mark.parametrize("damage", sorted(NUMBA_DAMAGE))
def test_a_damaged_file_of_numbas_cache_is_compiled_again(numba_cache, tmp_path, damage):
    """numba's own files of a CPU kernel in NUMBA_CACHE_DIR (`serial.kernel_cache._CacheFile`): an index cut short
    or a data file cut short (a disk that failed, a copy stopped) ended every command in numba's UnpicklingError,
    a FIFO at an index's name hung it and a folder at a data file's name ended it in IsADirectoryError. Each is
    taken as absent: the kernel is compiled again, and kept where it can be written."""
    folder = tmp_path / "numba"
    shutil.copytree(numba_cache, folder)
    pattern, damaged = NUMBA_DAMAGE[damage]
    for path in folder.rglob(pattern):
        damaged(path)
    p = _run_a(folder)
    assert p.returncode == 0 and "Traceback" not in p.stderr and "task shares" in p.stdout, p.stderr[-2000:]


A_KERNELS = """
import json
import nbsymple_versions as nb
state = nb.make_cluster(64, seed=1)
forces = nb.get_version("A").pipeline(state, "dp")
forces.warm_up(state.x)
kernels = {"pairwise": forces.backend.kernel, "galactic": forces.host.galactic, "axpy": forces.host.axpy}
counts = lambda d: [sum(d.stats.cache_hits.values()), sum(d.stats.cache_misses.values())]
print(json.dumps({name: counts(d) for name, d in kernels.items()}))
"""


def test_two_processes_that_need_a_kernel_at_once_compile_it_once(tmp_path):
    """Two processes started together on an empty NUMBA_CACHE_DIR, each needing A's kernels: one
    compiles each kernel, holding its lock (`compile_lock.compiled_once`), and the other waits and
    loads it. Before, both compiled (the suite's two workers compiled B's kernels side by side, 11 s
    each on two busy cores; MPI ranks and asv's benchmark processes alike)."""
    env = {**{k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}, "NUMBA_CACHE_DIR": str(tmp_path)}
    both = [subprocess.Popen([sys.executable, "-c", A_KERNELS], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True) for _ in range(2)]
    said = [p.communicate(timeout=900) for p in both]
    assert all(p.returncode == 0 for p in both), [err[-2000:] for _, err in said]
    stats = [json.loads(out) for out, _ in said]
    for kernel in stats[0]:
        assert sorted(s[kernel] for s in stats) == [[0, 1], [1, 0]], (kernel, stats)    # one miss, one hit


def test_a_kernels_lock_that_cannot_be_had_compiles_all_the_same(tmp_path, monkeypatch, capsys):
    """No regular file at the lock's name (a FIFO: never blocked on; a folder; a symbolic link:
    never followed), or a lock another holds past COMPILE_WAIT_S (a process stopped while it
    compiled; the wait said after SAY_AFTER_S): the kernel is compiled here all the same. A compile
    inside one's own takes no second lock (it would wait for itself)."""
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "folder").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "elsewhere")
    compiled = []
    for name in ("fifo", "folder", "link"):
        assert compile_lock._exclusive(str(tmp_path / name), 0) is None
        assert compile_lock.compiled_once(str(tmp_path / name), lambda sig: compiled.append(sig) or sig, name) == name
    assert compiled == ["fifo", "folder", "link"] and not (tmp_path / "elsewhere").exists()
    lock = str(tmp_path / "kernel.lock")
    held = compile_lock._exclusive(lock, 0)
    assert held is not None and compile_lock._exclusive(lock, 0) is None      # flock: one holder per open file
    monkeypatch.setattr(compile_lock, "COMPILE_WAIT_S", 0.2)
    monkeypatch.setattr(compile_lock, "SAY_AFTER_S", 0)
    assert compile_lock.compiled_once(lock, lambda sig: sig, "past the wait") == "past the wait"
    assert "waiting for another process that compiles the same kernel" in capsys.readouterr().err
    os.close(held)
    taken = []
    real = compile_lock._exclusive
    monkeypatch.setattr(compile_lock, "_exclusive", lambda path, wait_s: taken.append(path) or real(path, wait_s))
    inner = lambda sig: compile_lock.compiled_once(lock, lambda s: s, sig)
    assert compile_lock.compiled_once(lock, inner, "nested") == "nested" and taken == [lock]
    again = real(lock, 0)
    assert again is not None                     # released after the compile
    os.close(again)


def test_the_suites_processes_read_this_checkouts_modules_compiled():
    """A process the suite starts reads the checkout's modules as bytecode, also where Python
    writes none (`-B` here, PYTHONDONTWRITEBYTECODE): the session compiled them once
    (tests/conftest.py), where each of its processes compiled them from source (0.1 s apiece)."""
    code = textwrap.dedent("""
        import json, os, sys
        from importlib.machinery import SourceFileLoader
        compiled, to_code = [], SourceFileLoader.source_to_code
        def source_to_code(self, data, path, *args, **kwargs):      # called for a module read from source
            compiled.append(path)
            return to_code(self, data, path, *args, **kwargs)
        SourceFileLoader.source_to_code = source_to_code
        import nbsymple_versions.cli, tools.gate, benchmarks.grid
        ours = [os.path.join(os.getcwd(), p, "") for p in ("nbsymple_versions", "tools", "benchmarks")]
        mine = lambda path: str(path).startswith(tuple(ours))
        print(json.dumps([sum(mine(getattr(m, "__file__", "")) for m in list(sys.modules.values())),
                          [str(p) for p in compiled if mine(p)]]))
    """)
    r = subprocess.run([sys.executable, "-B", "-c", code], cwd=Path(__file__).resolve().parents[1],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    imported, from_source = json.loads(r.stdout)
    assert imported > 20 and from_source == [], (imported, from_source)
