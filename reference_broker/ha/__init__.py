"""Master–slave replication over the HA port (``spec.ha``): the master's server and the slave's client."""
