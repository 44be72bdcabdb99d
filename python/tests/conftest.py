"""Shared fixtures. Each test gets its own directory as HOME, XDG dirs and working directory, so
no user or project configuration leaks in, and a fresh database: a SQLite file in that directory,
or, in the pg/python/pytest variant (MNEMO_TEST_PG_URL set to the base URL of the throwaway
PostgreSQL server the ctest `pg` fixture started, tests/CMakeLists.txt), a fresh PostgreSQL
database made for the test and dropped after it (as tests/cli/lib.sh does for the CLI scripts).

MNEMO_LIBRARY names the libmnemo.so under test (python/tests/run.sh sets it to the fresh build);
MNEMO_CLI the `mnemo` command built from the same tree (for the round-trip tests)."""
import itertools
import os
import re
import subprocess

import pytest

import mnemo

PG_URL = os.environ.get("MNEMO_TEST_PG_URL") or None
_pg_names = itertools.count(1)


@pytest.fixture
def backend() -> str:
    """The backend under test: "postgres" in the pg/ variant, else "sqlite"."""
    return "postgres" if PG_URL else "sqlite"


def _psql(*sql: str) -> None:
    args = ["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", PG_URL, "-c", "SET client_min_messages = warning"]
    for s in sql:
        args += ["-c", s]
    p = subprocess.run(args, capture_output=True, text=True, stdin=subprocess.DEVNULL,
                       env={k: v for k, v in os.environ.items() if k != "LD_PRELOAD"})
    if p.returncode != 0:
        raise RuntimeError("psql %s: %s" % (" ".join(sql), p.stderr.strip()))


@pytest.fixture
def new_db(tmp_path):
    """new_db(name) -> a new, empty database target: tmp_path/NAME.db, or on PostgreSQL the URL of
    a fresh database (mnemo_py_<pid>_<n>), dropped when the test ends."""
    made = []

    def make(name: str) -> str:
        if not PG_URL:
            return str(tmp_path / (name + ".db"))
        db = "mnemo_py_%d_%d" % (os.getpid(), next(_pg_names))
        _psql("DROP DATABASE IF EXISTS %s" % db, "CREATE DATABASE %s" % db)
        made.append(db)
        # postgresql://USER@/DB?QUERY with DB replaced
        return re.sub(r"^([a-z]+://[^/]*)/[^?]*", lambda m: m.group(1) + "/" + db, PG_URL)

    yield make
    for db in made:  # FORCE: a connection a failed test left open must not keep it alive
        _psql("DROP DATABASE IF EXISTS %s WITH (FORCE)" % db)


# read before `isolated` takes the MNEMO_* variables away
TEST_DATA = os.path.join(os.environ.get("MNEMO_SOURCE_DIR", ""), "tests", "data")


@pytest.fixture
def test_data() -> str:
    """The repository's tests/data (fixtures such as a database of an older schema)."""
    return TEST_DATA


@pytest.fixture(autouse=True)
def isolated(tmp_path, monkeypatch):
    for k in list(os.environ):
        if k.startswith("MNEMO_") and k not in ("MNEMO_LIBRARY", "MNEMO_CLI", "MNEMO_DATA_DIR", "MNEMO_TEST_PG_URL"):
            monkeypatch.delenv(k)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def db_path(new_db):
    """The test's database target: a SQLite path, or the URL of a fresh PostgreSQL database."""
    return new_db("test")


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
