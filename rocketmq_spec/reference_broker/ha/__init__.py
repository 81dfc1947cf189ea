"""Master–slave replication over the HA port (``rocketmq_spec.spec.ha``): the master's server and the slave's
client."""
