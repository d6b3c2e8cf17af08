"""Build of the C extension (``composedyn.dynamics.compiled._call``) and of the compiled kernels;
metadata in pyproject.toml.

After the package and its extension are built, ``build_kernels`` runs ``python -m
composedyn.kernels.build`` on the built package in a subprocess (in as many worker processes as
this process may use CPUs, at most 8; ``COMPOSEDYN_BUILD_JOBS=N``: N), which compiles every kernel a
user can reach and writes
numba's cache into the built package as ``composedyn/dynamics/compiled/kernel_cache/``: the cache is
part of the wheel (listed in its RECORD, removed by ``pip uninstall``) and is only read at run
time.  It is keyed on numba's version, the CPU and the package's sources; a process that finds no
matching entry compiles lazily into a per-user cache and says so once on stderr.  Editable
installs skip this step (a development checkout compiles on first use), and so does
``COMPOSEDYN_KERNEL_CACHE=0``.  A failure of this step leaves the package without the cache and
is reported, never fatal.
"""

import json
import os
import shutil
import subprocess
import sys
import time

import numpy
from setuptools import Command, Extension, setup
from setuptools.command.build import build

CACHE = os.path.join("composedyn", "dynamics", "compiled", "kernel_cache")


class build_kernels(Command):
    """Compile the dynamics kernels into the built package (numba's cache as package data)."""

    description = "compile the dynamics kernels into the built package"
    user_options = []

    def initialize_options(self):
        self.build_lib = None
        self.editable_mode = False

    def finalize_options(self):
        self.set_undefined_options("build_py", ("build_lib", "build_lib"))

    def run(self):
        if self.editable_mode or self.get_finalized_command("build_py").editable_mode:
            return
        if os.environ.get("COMPOSEDYN_KERNEL_CACHE", "1") == "0":
            return
        target = os.path.abspath(os.path.join(self.build_lib, CACHE))
        shutil.rmtree(target, ignore_errors=True)
        env = dict(os.environ, COMPOSEDYN_KERNEL_CACHE_BUILD=target, COMPOSEDYN_COMPILE_NOTICE="1",
                   PYTHONPATH=os.pathsep.join(filter(None, [os.path.abspath(self.build_lib),
                                                            os.environ.get("PYTHONPATH")])))
        env.pop("NUMBA_CACHE_DIR", None)
        info = ("import json, numba, sys; from composedyn.dynamics.compiled import cache; "
                "json.dump({'numba': numba.__version__, 'cpu': cache.host_cpu(), 'stamp': cache.SOURCE_STAMP, "
                "'python': sys.version.split()[0]}, sys.stdout)")
        t0 = time.perf_counter()
        try:
            jobs = os.environ.get("COMPOSEDYN_BUILD_JOBS") or str(min(8, len(os.sched_getaffinity(0))))
            subprocess.run([sys.executable, "-m", "composedyn.kernels.build", "--jobs", jobs], env=env, check=True,
                           cwd=self.build_lib)
            built = subprocess.run([sys.executable, "-c", info], env=env, check=True, cwd=self.build_lib,
                                   capture_output=True, text=True).stdout
            with open(os.path.join(target, "build.json"), "w", encoding="utf-8") as f:
                json.dump(json.loads(built), f)
        except (OSError, subprocess.CalledProcessError, ValueError) as e:
            shutil.rmtree(target, ignore_errors=True)
            print(f"composedyn: the kernels could not be compiled at build ({e}); they will be compiled on "
                  "first use", file=sys.stderr)
            return
        print(f"composedyn: kernels compiled into {target} in {time.perf_counter() - t0:.0f} s", file=sys.stderr)

    def get_outputs(self):
        target = os.path.join(self.build_lib, CACHE)
        return [os.path.join(target, name) for name in os.listdir(target)] if os.path.isdir(target) else []


class build_with_kernels(build):
    sub_commands = build.sub_commands + [("build_kernels", None)]


setup(ext_modules=[Extension("composedyn.dynamics.compiled._call", ["dynamics/compiled/_call.c"],
                             include_dirs=[numpy.get_include()], extra_compile_args=["-O2"])],
      cmdclass={"build": build_with_kernels, "build_kernels": build_kernels})
