"""Shared fixtures. Each test gets its own directory as HOME, XDG dirs and working directory, so
no user or project configuration leaks in, and a fresh SQLite database file in it.

MNEMO_LIBRARY names the libmnemo.so under test (tests/python/run.sh sets it to the fresh build);
MNEMO_CLI the `mnemo` command built from the same tree (for the round-trip tests)."""
import os
import subprocess

import pytest

import mnemo


@pytest.fixture(autouse=True)
def isolated(tmp_path, monkeypatch):
    for k in list(os.environ):
        if k.startswith("MNEMO_") and k not in ("MNEMO_LIBRARY", "MNEMO_CLI", "MNEMO_DATA_DIR"):
            monkeypatch.delenv(k)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def db_path(tmp_path):
    return str(tmp_path / "test.db")


@pytest.fixture
def mem(db_path):
    with mnemo.Memory(db_path, {"memory.durability": "normal"}) as m:
        yield m


@pytest.fixture
def cli(db_path):
    """Runs the `mnemo` command on the test database; returns its standard output."""
    exe = os.environ.get("MNEMO_CLI")
    if not exe:
        pytest.fail("MNEMO_CLI must name the built `mnemo` command (tests/python/run.sh sets it)")

    # the command links its own sanitizer runtime (ASan build): not the one preloaded for python
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}

    def run(*args, check=True):
        p = subprocess.run([exe, "--db", db_path, *args], capture_output=True, text=True, env=env)
        if check and p.returncode != 0:
            raise AssertionError("mnemo %s failed (%d): %s" % (" ".join(args), p.returncode, p.stderr))
        return p.stdout if check else p

    return run
