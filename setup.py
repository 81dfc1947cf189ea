"""The compiled twins of the per-send codec work (docs/DESIGN.md, "The compiled hot path"); everything else
about the build is in pyproject.toml. Declared here because setuptools still calls its pyproject.toml form
experimental. Optional: where no C compiler is found the build goes on without it and codec.hotpath picks
the pure-Python twins."""

from setuptools import Extension, setup

setup(ext_modules=[Extension("rocketmq_spec.codec._hotpath", sources=["rocketmq_spec/codec/_hotpath.c"],
                             optional=True)])
