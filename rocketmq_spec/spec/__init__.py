"""Apache RocketMQ's classic remoting protocol and store formats, as declarative ``construct`` schemas.

Every rule of the specification is a :class:`rocketmq_spec.spec.clauses.Clause` registered next to the schema
it constrains; ``rocketmq_spec.spec.document`` renders all of them into ``docs/PROTOCOL.md``. Nothing in this
package does I/O beyond reading its own tables: the codec, the reference broker and the conformance suite
build on it.
"""
