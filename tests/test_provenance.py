"""`gpu_validate.provenance.code_version` on throwaway git repositories."""
from __future__ import annotations

import subprocess

import pytest

from gpu_validate.provenance import UNKNOWN, code_version


def git(root, *args):
    return subprocess.run(["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t", *args], check=True,
                          capture_output=True, text=True).stdout.strip()


@pytest.fixture
def repo(tmp_path):
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "code.py").write_text("x = 1\n")
    (root / "results").mkdir()
    (root / "results" / "table.csv").write_text("a\n1\n")
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "first")
    return root


def test_a_clean_tree_gives_its_commit(repo):
    head = git(repo, "rev-parse", "HEAD")
    assert code_version(repo) == head and len(head) == 40
    assert code_version(repo / "pkg") == head  # any folder of the tree


def test_uncommitted_changes_make_it_dirty(repo):
    head = git(repo, "rev-parse", "HEAD")
    (repo / "pkg" / "code.py").write_text("x = 2\n")
    assert code_version(repo) == f"{head}-dirty"
    git(repo, "checkout", "--", "pkg/code.py")
    (repo / "pkg" / "new.py").write_text("")  # an untracked module could change the run too
    assert code_version(repo) == f"{head}-dirty"


def test_the_folders_a_run_writes_are_not_counted(repo, tmp_path):
    head = git(repo, "rev-parse", "HEAD")
    (repo / "results" / "table.csv").write_text("a\n2\n")
    (repo / "results" / "new.csv").write_text("b\n")
    assert code_version(repo, exclude=[repo / "results"]) == head
    assert code_version(repo, exclude=[tmp_path / "elsewhere"]) == f"{head}-dirty"  # outside the tree: no effect
    (repo / "pkg" / "code.py").write_text("x = 3\n")
    assert code_version(repo, exclude=[repo / "results"]) == f"{head}-dirty"


def test_without_git_or_a_repository_it_is_unknown(tmp_path, monkeypatch):
    plain = tmp_path / "plain"
    plain.mkdir()
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    assert code_version(plain) == UNKNOWN == "unknown"
    (plain / "r").mkdir()
    git(plain / "r", "init", "-q")  # a repository with no commit yet
    assert code_version(plain / "r") == UNKNOWN
    monkeypatch.setenv("PATH", str(tmp_path / "nothing"))
    assert code_version() == UNKNOWN


def test_this_checkout_has_a_version():
    version = code_version()
    assert version == UNKNOWN or len(version.removesuffix("-dirty")) == 40
