"""Build of the one C extension (``composedyn.dynamics.compiled._call``); metadata in pyproject.toml."""

import numpy
from setuptools import Extension, setup

setup(ext_modules=[Extension("composedyn.dynamics.compiled._call", ["dynamics/compiled/_call.c"],
                             include_dirs=[numpy.get_include()], extra_compile_args=["-O2"])])
