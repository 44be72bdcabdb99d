"""python/README.md's examples run as written: the fenced blocks right after a line
`<!-- example: run -->` (the convention of tests/cli/readme.py). The first shell block, the
install, is how python/tests/setup.sh installed the package under test, offline, in
$BUILD_DIR/python/tree (a copy laid out as the repository); the others run here."""
import os
import re
import subprocess

import mnemo

SOURCE = os.environ.get("MNEMO_SOURCE_DIR", "")  # read before conftest's `isolated` removes it
TREE = os.path.join(os.environ.get("BUILD_DIR", ""), "python", "tree")
README = os.path.join(SOURCE, "python", "README.md")


def examples(lang):
    with open(README, encoding="utf-8") as f:
        text = f.read()
    return re.findall(r"^<!-- example: run -->\n\s*```%s\n(.*?)^```" % lang, text, re.M | re.S)


def test_the_readme_marks_its_examples():
    assert len(examples("python")) == 1 and len(examples("sh")) == 2


def test_the_usage_example_runs():
    scope = {}
    exec(compile(examples("python")[0], README, "exec"), scope)
    assert [m["role"] for m in scope["ctx"].messages] == ["system", "user"]


def test_the_install_line_installed_the_package_under_test():
    venv = os.path.join(TREE, ".venv")
    assert mnemo.__file__.startswith(venv), mnemo.__file__
    # the check the README gives after the install, in that directory: the bundled library, not
    # one named by MNEMO_LIBRARY (python/tests/run.sh names the build's)
    env = {k: v for k, v in os.environ.items() if k != "MNEMO_LIBRARY"}
    p = subprocess.run(["sh", "-eu", "-c", examples("sh")[1]], cwd=TREE, env=env, capture_output=True, text=True,
                       stdin=subprocess.DEVNULL)
    assert p.returncode == 0, p.stdout + p.stderr
    version, path = p.stdout.split()
    assert version == mnemo.version()
    assert path.startswith(venv), path
