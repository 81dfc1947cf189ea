"""The reference controller (RocketMQ 5's automatic failover): broker ids, liveness, elections and the
SyncStateSet of every broker-set, for brokers in controller mode (``enableControllerMode``).

:mod:`.replicas` (the table and its decisions) and :mod:`.liveness` (heartbeats, the election policy) are
sans-IO; :mod:`.server` is the edge. A single controller: Apache's replication between controllers
(DLedger, JRaft) is not implemented, so a controller whose peers name others never leads (:mod:`.peers`).
"""
