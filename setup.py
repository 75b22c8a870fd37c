"""Builds the extension module difftx._difftx with CMake for `pip install .` / `pip wheel .`
(pyproject.toml holds the metadata). The version is the C API's (include/difftx/difftx.h).

DIFFTX_BUILD_DIR: an already configured build directory (e.g. build/release) whose module is
built (an up-to-date one is not compiled again) and taken; its Python must be this one's version.
Otherwise a Release build is configured under setuptools' build directory for this Python."""
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent


def version():
    header = (ROOT / "include" / "difftx" / "difftx.h").read_text()
    parts = [re.search(rf"#define DIFFTX_VERSION_{p} (\d+)", header).group(1) for p in ("MAJOR", "MINOR", "PATCH")]
    return ".".join(parts)


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        suffix = sysconfig.get_config_var("EXT_SUFFIX")
        given = os.environ.get("DIFFTX_BUILD_DIR")
        if given:
            build_dir = Path(given).resolve()
            if not (build_dir / "CMakeCache.txt").exists():
                sys.exit(f"setup.py: DIFFTX_BUILD_DIR={given} is not a configured CMake build directory")
        else:
            build_dir = Path(self.build_temp).resolve() / "cmake"
            self.configure(build_dir)
        jobs = ["-j", str(self.parallel)] if self.parallel else []
        subprocess.run(["cmake", "--build", str(build_dir), "--target", "_difftx", *jobs], check=True)
        built = build_dir / "python" / "difftx" / ("_difftx" + suffix)
        if not built.exists():
            found = sorted(p.name for p in (build_dir / "python" / "difftx").glob("_difftx*.so"))
            sys.exit(f"setup.py: no {built.name} in {built.parent} (found: {', '.join(found) or 'none'}): the build "
                     f"is for another Python than {sys.executable} ({sys.version.split()[0]}); reconfigure it with "
                     f"-DPython_EXECUTABLE={sys.executable}, or unset DIFFTX_BUILD_DIR")
        target = Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built, target)

    def configure(self, build_dir):
        args = ["-S", str(ROOT), "-B", str(build_dir), "-DCMAKE_BUILD_TYPE=Release",
                "-DCMAKE_CXX_FLAGS_RELEASE=-O3 -DNDEBUG", "-DDIFFTX_TESTS=OFF", "-DDIFFTX_PYTHON=ON",
                f"-DPython_EXECUTABLE={sys.executable}"]
        if shutil.which("ninja"):
            args += ["-G", "Ninja"]
        try:
            import pybind11
            args.append(f"-Dpybind11_DIR={pybind11.get_cmake_dir()}")
        except ImportError:
            pass  # CMake looks for Debian's pybind11-dev
        subprocess.run(["cmake", *args], check=True)


setup(version=version(), ext_modules=[Extension("difftx._difftx", sources=[])], cmdclass={"build_ext": CMakeBuild},
      options={"build": {"build_base": "build/pip"}})
