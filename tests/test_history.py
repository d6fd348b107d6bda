"""`python -m tools.tracking history`: which commits from the reference to HEAD a machine's
results still lack (what the command measures, and resumes with after an interruption)."""
import json
import subprocess

from tools.tracking import missing_commits, reference_commit, spread

STEP, SHARE = "steps.Step.time_step_leapfrog", "steps.TaskShares.track_share"


def _git(*args, cwd):
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True).stdout.strip()


def _results(folder, commit, date, rows):
    """An asv results file of `commit` whose benchmarks `rows` ({name: values}) hold these values."""
    folder.mkdir(parents=True, exist_ok=True)
    params = [["'A'"], ["256"], ["'dp'"]]
    data = {"commit_hash": commit, "date": date, "env_name": "env", "python": "3.11", "version": 2,
            "result_columns": ["result", "params"], "results": {k: [v, params] for k, v in rows.items()}}
    (folder / f"{commit[:8]}-env.json").write_text(json.dumps(data))


def test_the_commits_a_machine_lacks_from_the_reference_on(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    _git("init", "-q", cwd=repo)
    commits = []
    for i in range(4):
        (repo / "f.txt").write_text(f"{i}\n")
        _git("add", "f.txt", cwd=repo)
        _git("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", f"c{i}", cwd=repo)
        commits.append(_git("rev-parse", "HEAD", cwd=repo))
    results = tmp_path / "results"
    _results(results / "m", commits[1], 2, {STEP: [1.0], SHARE: [99.0]})      # complete
    _results(results / "m", commits[2], 3, {STEP: [1.0], SHARE: [None]})      # stopped midway: share all null
    _results(results / "other", commits[0], 1, {STEP: [1.0], SHARE: [99.0]})  # another machine's
    _results(results / "m", "f" * 40, 0, {STEP: [1.0], SHARE: [99.0]})       # a fork's commit: passed over
    assert reference_commit(results, repo) == commits[0]
    names = {STEP, SHARE}
    assert missing_commits(commits[0], "m", names, results, repo=repo) == [commits[0], commits[2], commits[3]]
    assert missing_commits(commits[1], "m", names, results, repo=repo) == [commits[2], commits[3]]
    assert missing_commits(commits[1], "m", {STEP}, results, repo=repo) == [commits[3]]
    assert missing_commits(commits[0], "other", names, results, repo=repo) == commits[1:]


def test_a_history_since_an_annotated_tag_starts_at_its_commit(tmp_path):
    """`history --since v1` (an annotated tag) listed the tag's own hash, no commit's, to measure."""
    repo = tmp_path / "repo"
    repo.mkdir()
    _git("init", "-q", cwd=repo)
    for i in range(2):
        (repo / "f.txt").write_text(f"{i}\n")
        _git("add", "f.txt", cwd=repo)
        _git("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", f"c{i}", cwd=repo)
    _git("-c", "user.email=t@t", "-c", "user.name=t", "tag", "-a", "-m", "v1", "v1", "HEAD~1", cwd=repo)
    commits = _git("rev-list", "--reverse", "HEAD", cwd=repo).split()
    assert missing_commits("v1", "m", {STEP}, tmp_path / "results", repo=repo) == commits


def test_a_history_covers_its_range_evenly_at_every_stop():
    """The commits are measured newest and oldest first, then halving: after k of them, no gap is
    more than about twice the even spacing, and every commit comes exactly once."""
    for n in (0, 1, 2, 3, 10, 103):
        commits = list(range(n))
        order = spread(commits)
        assert sorted(order) == commits
        for k in range(2, n + 1):
            taken = sorted(order[:k])
            widest = max(b - a for a, b in zip(taken, taken[1:]))
            assert widest <= 2 * (n - 1) / (k - 1) + 1, (n, k, taken)
    assert spread(list(range(9)))[:5] == [8, 0, 4, 2, 6]
