"""Apache RocketMQ releases as test targets: resolved from Maven Central, run on loopback.

``rmq-apache run VERSION`` from the shell, :class:`ApacheRocketMQ` from Python, the ``rocketmq_spec.apache``
pytest fixture in tests. Jars are cached per version and never part of the project.
"""

from rocketmq_spec.apache.cluster import ApacheRocketMQ, provision
from rocketmq_spec.apache.maven import NotServed, ProvisionError, ToolMissing
from rocketmq_spec.apache.releases import RELEASES, Release, release

__all__ = ["RELEASES", "ApacheRocketMQ", "NotServed", "ProvisionError", "Release", "ToolMissing", "provision",
           "release"]
