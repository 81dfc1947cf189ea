"""Controller mode (``enableControllerMode``): the broker's id, role and SyncStateSet come from a controller
(``rocketmq_spec.spec.controller``, ``rocketmq_spec.spec.broker_identity``)."""
