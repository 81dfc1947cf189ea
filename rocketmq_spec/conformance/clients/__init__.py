"""Clients under test: ``rmq-conformance client --driver NAME_OR_PATH``.

The broker suite sends requests and judges answers; this package turns the roles around, as
Autobahn|Testsuite does for WebSocket clients. A judging server (a recording, scripting relay in front of
a real name server and broker, :mod:`.relay`) sits between a client driver (an executable that follows
the contract of :mod:`.driver`) and the broker; each case runs a scenario through it and judges a client
clause (``rocketmq_spec.spec.client*``) from the frames recorded both ways and the events the driver
printed.
"""
