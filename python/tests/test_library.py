"""Finding libmnemo: MNEMO_LIBRARY, the copy next to the installed package, the build tree, the
system path; a missing, foreign or older library is a clear error naming every place looked."""
import ctypes.util
import os
import subprocess
import sys

import pytest

import mnemo
from mnemo import _lib


def run_python(code, **env):
    e = dict(os.environ)
    for k, v in env.items():
        if v is None:
            e.pop(k, None)
        else:
            e[k] = v
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=e)


def test_mnemo_library_wins():
    assert mnemo.library_path() == os.environ["MNEMO_LIBRARY"]


def test_the_installed_package_carries_its_library():
    # pip install copied the built library into the package: found without MNEMO_LIBRARY
    p = run_python("import mnemo; print(mnemo.library_path()); print(mnemo.version())", MNEMO_LIBRARY=None)
    assert p.returncode == 0, p.stderr
    path, ver = p.stdout.split()
    assert path == os.path.join(os.path.dirname(mnemo.__file__), "libmnemo.so")
    assert ver == mnemo.version()


def test_a_missing_mnemo_library_falls_back_and_is_named_when_nothing_loads(monkeypatch):
    p = run_python("import mnemo; print(mnemo.library_path())", MNEMO_LIBRARY="/nonexistent/libmnemo.so")
    assert p.returncode == 0 and p.stdout.strip().endswith("mnemo/libmnemo.so")

    monkeypatch.setattr(_lib, "_lib", None)
    monkeypatch.setattr(_lib, "_candidates", lambda: [("MNEMO_LIBRARY", "/nonexistent/libmnemo.so"),
                                                     ("the package directory", "/nowhere/mnemo/libmnemo.so"),
                                                     ("the system library path", "libmnemo-absent.so.0")])
    with pytest.raises(mnemo.LibraryError) as e:
        _lib.load()
    msg = str(e.value)
    assert "libmnemo 0.1.0 or newer was not found" in msg
    assert "MNEMO_LIBRARY: /nonexistent/libmnemo.so: not found" in msg
    assert "the package directory: /nowhere/mnemo/libmnemo.so: not found" in msg
    assert "the system library path: libmnemo-absent.so.0:" in msg
    assert isinstance(e.value, ImportError)


def test_a_foreign_library_is_refused():
    libc = ctypes.util.find_library("c")
    lib, why = _lib._try(libc)
    assert lib is None and why == "not libmnemo (no mn_version_number)"


def test_an_older_library_is_refused(monkeypatch):
    monkeypatch.setattr(_lib, "MIN_VERSION", (0, 99, 0))
    lib, why = _lib._try(os.environ["MNEMO_LIBRARY"])
    assert lib is None and "older than or incompatible with the 0.99.0" in why
    monkeypatch.setattr(_lib, "MIN_VERSION", (1, 0, 0))
    assert "incompatible" in _lib._try(os.environ["MNEMO_LIBRARY"])[1]


def test_library_warnings_reach_the_logging_module(db_path, caplog, isolated):
    # an unknown key in a configuration file is a library warning, not an error
    cfg = isolated / "cfg.yaml"
    cfg.write_text("memory:\n  colour: red\n")
    with caplog.at_level("WARNING", logger="mnemo"):
        mnemo.Memory(db_path, config_file=str(cfg)).close()
    assert any("colour" in r.getMessage() for r in caplog.records)
