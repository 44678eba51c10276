"""Builds the `_witness` extension with the project's CMake build (scripts/setup installs what it
needs) and packages it with python/witness. Used by `pip install --no-build-isolation .`.

The build reuses build/ when it is configured (scripts/build) for this Python's version, else it
configures build-pip/ for the running interpreter. WITNESS_BUILD_DIR picks another folder."""

import glob
import os
import shutil
import subprocess
import sys
import sysconfig

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))


def _configured_for_this_python(build_dir):
    # The extension's file name carries the interpreter's ABI tag (cpython-311-x86_64-linux-gnu).
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    cache = os.path.join(build_dir, "CMakeCache.txt")
    return os.path.exists(cache) and glob.glob(os.path.join(build_dir, "python", "witness", "_witness" + suffix))


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build_dir = os.environ.get("WITNESS_BUILD_DIR") or os.path.join(HERE, "build")
        if not os.environ.get("WITNESS_BUILD_DIR") and not _configured_for_this_python(build_dir):
            build_dir = os.path.join(HERE, "build-pip")
        if not os.path.isdir(os.path.join(HERE, "web", "node_modules")):
            sys.exit("witness: web/node_modules is missing: run scripts/setup first (it installs the build tools)")
        if not os.path.exists(os.path.join(build_dir, "CMakeCache.txt")):
            subprocess.check_call(["cmake", "-S", HERE, "-B", build_dir, "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
                                   "-DWITNESS_BENCH=OFF", f"-DPython3_EXECUTABLE={sys.executable}"])
        subprocess.check_call(["cmake", "--build", build_dir, "--target", "_witness", "-j", str(os.cpu_count() or 2)])
        suffix = sysconfig.get_config_var("EXT_SUFFIX")
        built = os.path.join(build_dir, "python", "witness", "_witness" + suffix)
        if not os.path.exists(built):
            sys.exit(f"witness: the build made no {built}")
        target = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copyfile(built, target)


setup(
    packages=["witness"],
    package_dir={"witness": "python/witness"},
    ext_modules=[Extension("witness._witness", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    zip_safe=False,
)
