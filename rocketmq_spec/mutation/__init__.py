"""Mutation testing of the conformance suite: how much of a broker's wire-visible behaviour it judges.

Cosmic Ray enumerates and applies one-token mutations of the reference broker's source (a comparison
flipped at its boundary, a constant moved by one, a condition negated, ...); each mutant is a broker with
one realistic defect. The suite judges it over the wire and through the store it leaves behind, exactly as
it judges any broker: a mutant is *killed* when some case fails against it, *survives* when every case
passes. A survivor is either a gap in the suite (a case to add) or an *equivalent* mutant, one no client
could tell from the original; ``reviewed.toml`` lists both kinds with the reason.

Each mutant runs in a copy of the project tree, in a process of its own, against only the cases that
execute the mutated lines (found once by a run under coverage with one context per case); the store
cases always run on the store the mutant wrote. The session and the report import nothing of the broker:
it is source to mutate and a tree to run ``python -m rocketmq_spec.mutation.runner`` in, which starts that
tree's brokers in its own process (``in_process``) so that coverage sees them. This package sits above
both the suite and the broker for that reason; the suite itself never imports the broker.
"""
