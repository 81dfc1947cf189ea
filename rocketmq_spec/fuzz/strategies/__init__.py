"""Hypothesis strategies for every structure of the spec, one module per concept.

``primitives`` (Java integer ranges, text the wire can carry), ``frames`` (RemotingCommand in both
serializations), ``headers`` (custom headers of the core commands), ``bodies`` (their JSON bodies),
``properties`` (message property maps), ``commitlog``, ``consumequeue``, ``indexfile`` and ``store``
(whole small store directories). Every strategy yields *canonical* values: ones that survive an
encode/decode round trip unchanged, so a property can compare the two sides with ``==``.
"""
