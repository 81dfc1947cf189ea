"""The client conformance suite (``rmq-conformance client``): drivers of real RocketMQ clients, run once
per scenario while a judging server records every frame."""
