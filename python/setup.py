"""Build hook: copies the built libmnemo.so into the package, so that an installed `mnemo` finds
its library next to itself. The library copied is $MNEMO_BUILD_LIBRARY, else ../build/libmnemo.so
(what `make` builds) when it exists; with neither, the package installs without a copy and finds
the library through MNEMO_LIBRARY or the system path at run time (docs/python.md)."""
import os
import shutil

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))


class build_py_with_library(build_py):
    def run(self):
        super().run()
        src = os.environ.get("MNEMO_BUILD_LIBRARY") or os.path.join(HERE, "..", "build", "libmnemo.so")
        if os.path.isfile(src):
            dst = os.path.join(self.build_lib, "mnemo", "libmnemo.so")
            shutil.copyfile(os.path.realpath(src), dst)  # the file itself, not a symlink
            os.chmod(dst, 0o755)
            print("mnemo: bundled %s" % os.path.realpath(src))
        else:
            print("mnemo: no libmnemo.so bundled (%s not found); set MNEMO_LIBRARY at run time" % src)


setup(cmdclass={"build_py": build_py_with_library})
