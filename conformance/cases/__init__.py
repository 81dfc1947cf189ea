"""The conformance cases, one module per area.

Run them with ``rmq-conformance`` or ``pytest -p conformance.plugin conformance/cases --rmq-broker ...``.
"""
