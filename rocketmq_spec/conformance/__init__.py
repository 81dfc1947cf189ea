"""A conformance suite for RocketMQ remoting targets and store directories.

Each case checks one clause of ``rocketmq_spec.spec`` against a live name server and broker (over TCP only) or
against a store directory (through its files only), so the same cases judge the reference broker and Apache
RocketMQ itself. Verdicts are richer than pass/fail because a protocol has SHOULDs, optional commands and
documented deviations, and a reader of the report needs to tell those apart from breakage. """
