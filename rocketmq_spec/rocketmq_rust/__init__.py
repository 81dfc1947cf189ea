"""rocketmq-rust releases as test targets: installed from crates.io with cargo, run on loopback.

``rmq-rust run VERSION`` from the shell, :class:`RocketMQRust` from Python, the
``rocketmq_spec.rocketmq_rust`` pytest fixture in tests. The binaries are built once per version into a cache
and never part of the project.
"""

from rocketmq_spec.rocketmq_rust.cargo import install, installed
from rocketmq_spec.rocketmq_rust.cluster import RocketMQRust
from rocketmq_spec.rocketmq_rust.releases import RELEASES, Release, release

__all__ = ["RELEASES", "Release", "RocketMQRust", "install", "installed", "release"]
