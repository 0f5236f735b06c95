"""The commit a benchmark's JSON records (warpgemm.bench.gemm_bench.source_commit)."""
import subprocess

from warpgemm.bench.gemm_bench import source_commit


def test_a_modified_tree_is_not_recorded_as_its_commit(tmp_path):
    def git(*args):
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=tmp_path, check=True,
                       capture_output=True)

    assert source_commit(tmp_path) is None  # not a checkout
    git("init", "-q")
    (tmp_path / "kernel.py").write_text("a = 1\n")
    git("add", "kernel.py")
    git("commit", "-qm", "one")
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=tmp_path, capture_output=True,
                          text=True).stdout.strip()
    assert source_commit(tmp_path) == head
    (tmp_path / "notes.txt").write_text("untracked files do not count\n")
    assert source_commit(tmp_path) == head
    (tmp_path / "kernel.py").write_text("a = 2\n")
    assert source_commit(tmp_path) == head + "+modified"
