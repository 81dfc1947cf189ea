"""The compiled twins of the per-send codec work (docs/DESIGN.md, "The compiled hot path") and the broker's
answer sender (docs/DESIGN.md, "More than one core"); everything else about the build is in pyproject.toml.
Declared here because setuptools still calls its pyproject.toml form experimental. Optional: where no C
compiler is found the build goes on without them and the pure-Python paths run."""

from setuptools import Extension, setup

setup(ext_modules=[Extension("rocketmq_spec.codec._hotpath", sources=["rocketmq_spec/codec/_hotpath.c"],
                             optional=True),
                   Extension("rocketmq_spec.reference_broker._sender",
                             sources=["rocketmq_spec/reference_broker/_sender.c"], optional=True)])
