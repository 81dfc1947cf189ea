"""Custom headers of the core commands, drawn from the ``rocketmq_spec.spec.headers`` tables themselves.

One generic strategy walks a :class:`~spec.headers.HeaderSpec`'s fields, so a header added to the tables
is fuzzed without new code. Typed values are canonical (required fields always present, absent optional
fields left out rather than None), and :func:`client_forms` rewrites their extFields strings into the
other spellings receivers meet from non-Java clients.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hypothesis import strategies as st

from rocketmq_spec.fuzz.strategies.primitives import int32s, int64s, texts
from rocketmq_spec.spec.codes import RequestCode
from rocketmq_spec.spec.headers import Field, FieldType, HeaderSpec, header_for

HeaderValues = dict[str, Any]
"""Typed values keyed as ``rocketmq_spec.codec.custom_header.decode_header`` returns them (``Field.key``)."""


def header_specs() -> list[HeaderSpec]:
    """Every distinct header the registry hands out, for requests and responses, in a stable order."""
    found: dict[str, HeaderSpec] = {}
    for code in RequestCode:
        for is_response in (False, True):
            spec = header_for(code, is_response)
            if spec is not None:
                found.setdefault(spec.java_class, spec)
    return [found[name] for name in sorted(found)]


def field_values(kind: FieldType) -> st.SearchStrategy[Any]:
    """Values of the Java type a field's string stands for, over the type's whole range."""
    by_type: dict[FieldType, st.SearchStrategy[Any]] = {
        FieldType.STRING: texts(), FieldType.INT: int32s(), FieldType.LONG: int64s(),
        FieldType.BOOLEAN: st.booleans()}
    return by_type[kind]


@st.composite
def header_values(draw: st.DrawFn, spec: HeaderSpec) -> HeaderValues:
    """Required fields always, each optional field present or absent."""
    values: HeaderValues = {}
    for field in spec.fields:
        if field.required or draw(st.booleans()):
            values[field.key] = draw(field_values(field.type))
    return values


def specs_and_values() -> st.SearchStrategy[tuple[HeaderSpec, HeaderValues]]:
    """A header of the registry with values for it."""
    return st.sampled_from(header_specs()).flatmap(
        lambda spec: st.tuples(st.just(spec), header_values(spec)))


def _boolean_spellings(value: bool) -> st.SearchStrategy[str]:
    """Java writes "true"/"false"; C++ and Go clients write "1"/"0" or capitalised names. Only a spelling
    of "true" is true (RMQ-CMD-BOOLEAN: Boolean.parseBoolean reads "1" as false too)."""
    word = "true" if value else "false"
    return st.sampled_from([word, word.upper(), word.capitalize(), *(() if value else ("1", "0"))])


@st.composite
def client_forms(draw: st.DrawFn, spec: HeaderSpec, values: Mapping[str, Any]) -> dict[str, Any]:
    """extFields for ``values`` as a JSON header could carry them: booleans in any accepted spelling or
    as raw JSON booleans, numbers as raw JSON numbers or strings, plus keys the header does not know."""
    ext: dict[str, Any] = {}
    for field in spec.fields:
        if field.key not in values:
            continue
        value = values[field.key]
        if field.type is FieldType.BOOLEAN:
            ext[field.name] = draw(st.one_of(st.just(value), _boolean_spellings(value)))
        elif field.type in (FieldType.INT, FieldType.LONG):
            ext[field.name] = draw(st.sampled_from([value, str(value)]))
        else:
            ext[field.name] = value
    known = set(spec.by_wire_name())
    extra = draw(st.dictionaries(texts(min_size=1).filter(lambda key: key not in known),
                                 st.one_of(texts(), int64s(), st.booleans()), max_size=4))
    return {**extra, **ext}


def required_fields(spec: HeaderSpec) -> list[Field]:
    return [field for field in spec.fields if field.required]
