"""rmq-admin: administer a RocketMQ cluster from Python, built on the spec's admin tables."""
