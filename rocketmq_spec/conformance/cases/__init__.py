"""The conformance cases, one module per area.

Run them with ``rmq-conformance`` or ``pytest -p conformance.plugin rocketmq_spec/conformance/cases
--rmq-broker ...``. """
