"""A soak harness: drives any broker by address the way a hostile peer or a crash would, and prints a table.

Scenarios (each one row, or a few, of the table): many concurrent connections; many long polls parked
and then released by sends; a storm of malformed frames with a control probe after every batch; frames
abandoned half-way; and, when the harness can start and kill the target, kill -9 cycles under
SYNC_FLUSH load with a ledger of acknowledged sends checked after every restart, then the store checked
offline. Every figure comes from the target's own process (RSS, CPU time from /proc) when its pid is
known, so the table says what the broker paid, not what this client did.

Run ``python -m benchmarks.soak --help``; ``tox -e soak`` runs the full form against a reference broker
the harness starts itself, the default test run a short form (tests/test_soak.py).
"""
