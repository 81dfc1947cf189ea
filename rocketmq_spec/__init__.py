"""Apache RocketMQ's protocols and store formats as an executable specification, and what is built on it.

Every module of the project lives under this one package, so that installing it beside an application
adds one import name: ``rocketmq_spec.spec`` (the tables and clauses), ``.codec`` (encoders and sans-IO
decoders built from them), ``.reference_broker``, ``.conformance``, ``.fuzz``, ``.spark``, ``.admin``, and
the launchers of real targets (``.apache``, ``.rocketmq_rust``, ``.targets``).
"""
