"""JSON command bodies, drawn from the bean tables of ``rocketmq_spec.spec.bodies``.

One generic strategy walks a :class:`~spec.bodies.BodySpec`: scalars by their JSON kind (enum fields by
their constants), nested beans, arrays of beans and maps of beans recursively. The tables do not type the
elements of scalar arrays or the values of plain maps, so those are drawn as strings or integers, which is
what the Java beans hold there. Absent properties are left out rather than None, as a decoder returns
them, so values are canonical; required properties and those with a Java default are always present,
since a decoder rejects the ones and fills in the others.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from rocketmq_spec.fuzz.strategies.primitives import int32s, int64s, texts
from rocketmq_spec.spec import auth as spec_auth
from rocketmq_spec.spec import bodies as spec_bodies
from rocketmq_spec.spec import pop as spec_pop
from rocketmq_spec.spec.bodies import BodyField, BodySpec, Json

MAX_ELEMENTS = 3
"""Elements of a generated array or map: nesting multiplies sizes, and one or two already cover order."""


def body_specs() -> list[BodySpec]:
    """Every bean table ``rocketmq_spec.spec.bodies``, ``rocketmq_spec.spec.pop`` (the 5.x POP bodies) and
    ``rocketmq_spec.spec.auth`` (ACL 2.0's UserInfo, AclInfo) define, in a stable order."""
    found = {value.java_class: value for module in (spec_bodies, spec_pop, spec_auth)
             for value in vars(module).values() if isinstance(value, BodySpec)}
    return [found[name] for name in sorted(found)]


def _map_keys() -> st.SearchStrategy[str | int]:
    """Text keys, or the Long/Integer keys fastjson writes unquoted (``brokerAddrs``)."""
    return st.one_of(texts(), int64s())


def field_values(field: BodyField) -> st.SearchStrategy[Any]:
    if field.constants:
        return st.sampled_from(field.constants)
    if field.kind is Json.STRING:
        return texts()
    if field.kind is Json.NUMBER:
        return int64s()
    if field.kind is Json.BOOLEAN:
        return st.booleans()
    element = bean_values(field.bean) if field.bean is not None else None
    if field.kind is Json.ARRAY:
        if element is not None:
            return st.lists(element, max_size=MAX_ELEMENTS)
        return st.one_of(st.lists(texts(), max_size=MAX_ELEMENTS), st.lists(int32s(), max_size=MAX_ELEMENTS))
    if field.is_map:
        plain = st.one_of(texts(), st.lists(texts(), max_size=MAX_ELEMENTS))
        values = element if element is not None else plain
        return st.dictionaries(_map_keys(), values, max_size=MAX_ELEMENTS)
    assert element is not None, f"{field.key}: an OBJECT field is a bean or a map"
    return element


@st.composite
def bean_values(draw: st.DrawFn, spec: BodySpec) -> dict[str, Any]:
    """Each optional property of the bean present or absent; present ones of their table's kind."""
    value: dict[str, Any] = {}
    for field in spec.fields:
        if field.required or field.default is not None or draw(st.booleans()):
            value[field.key] = draw(field_values(field))
    return value


def specs_and_values() -> st.SearchStrategy[tuple[BodySpec, dict[str, Any]]]:
    return st.sampled_from(body_specs()).flatmap(lambda spec: st.tuples(st.just(spec), bean_values(spec)))


def mutate_scalars(data: st.DataObject, value: Any) -> Any:
    """``value`` with the same shape (keys, lengths, kinds) and some of its scalars redrawn.

    Each string may get new text, each integer a new int64 and each boolean its negation, so a golden
    body keeps its structure while its contents vary.
    """
    if isinstance(value, dict):
        return {key: mutate_scalars(data, item) for key, item in value.items()}
    if isinstance(value, list):
        return [mutate_scalars(data, item) for item in value]
    if not data.draw(st.booleans()):
        return value
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return data.draw(int64s())
    if isinstance(value, str):
        return data.draw(texts())
    return value
