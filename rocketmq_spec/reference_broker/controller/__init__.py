"""RocketMQ 5's automatic failover on the reference side: the reference controller (broker ids, liveness,
elections and the SyncStateSet of every broker-set) and the broker's part in controller mode
(``enableControllerMode``: its id, role and SyncStateSet come from a controller;
``rocketmq_spec.spec.controller``, ``rocketmq_spec.spec.broker_identity``).

:mod:`.replicas` (the table and its decisions) and :mod:`.liveness` (heartbeats, the election policy) are
sans-IO; :mod:`.server` is the controller's edge. A single controller: Apache's replication between
controllers (DLedger, JRaft) is not implemented, so a controller whose peers name others never leads
(:mod:`.peers`).
"""
