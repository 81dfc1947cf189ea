"""Apache RocketMQ releases as test targets: resolved from Maven Central, run on loopback.

``rmq-apache run VERSION`` from the shell, :class:`ApacheRocketMQ` from Python, the ``apache_rocketmq``
pytest fixture in tests. Jars are cached per version and never part of the project.
"""

from apache_rocketmq.cluster import ApacheRocketMQ, provision
from apache_rocketmq.maven import NotServed, ProvisionError, ToolMissing
from apache_rocketmq.releases import RELEASES, Release, release

__all__ = ["RELEASES", "ApacheRocketMQ", "NotServed", "ProvisionError", "Release", "ToolMissing", "provision",
           "release"]
