"""Building blocks of the scenario schema: the base model, unit-typed values,
unions chosen by a key or by the value's shape, and the translation of pydantic's
errors into one :class:`~aqmlab.errors.UserError` that names every bad field.

Unit-typed values keep the user's text (``"10Mbps"``) in the model, so a scenario
written back to TOML reads as the user wrote it; they are checked here and
converted to integers when the scenario is resolved.
"""

import typing
from typing import Annotated, Any, Callable, Union

from pydantic import BaseModel, BeforeValidator, ConfigDict, Discriminator, Tag, ValidationError
from pydantic_core import PydanticCustomError

from . import units
from .errors import UserError

#: Tags of unions chosen by our own discriminators start with this marker; error
#: paths drop them.
_TAG = "~"


class Model(BaseModel):
    """Base of every scenario table: unknown fields are errors."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, validate_default=False)


def field_error(field: str, message: str) -> PydanticCustomError:
    """An error about ``field`` of the model being validated (for model validators)."""
    return PydanticCustomError("field_error", message, {"field": field})


def _unit(parser: Callable[..., Any], **kwargs: Any) -> Any:
    def check(value: Any) -> Any:
        try:
            parser(value, None, **kwargs)
        except units.UserError as e:
            raise PydanticCustomError("unit", str(e)) from None
        return value.strip() if isinstance(value, str) else value

    return Annotated[Any, BeforeValidator(check)]


def _check_payload(value: Any, field: Any = None) -> None:
    units.parse_payload(value, 1, field)


def _check_payload_or_inf(value: Any, field: Any = None) -> None:
    if isinstance(value, str) and value.strip() == "inf":
        return
    try:
        _check_payload(value, field)
    except UserError:
        raise UserError(
            f'expected "inf" or a size such as "100kB" or "30pkt", got {units._show(value)}'
        ) from None


def _check_amount(value: Any, field: Any = None) -> None:
    units.payload_amount(value, 1, field)


def _check_packets_or_int(value: Any, field: Any = None) -> None:
    if isinstance(value, int) and not isinstance(value, bool):
        if value < 1:
            raise UserError(f"must be at least 1 packet, got {value}")
        return
    units.parse_packets(value, field)


#: ``"10Mbps"``: bits per second, > 0.
Rate = _unit(units.parse_rate)
#: ``"20ms"``: a time >= 0 (bare ``0`` allowed).
Time = _unit(units.parse_time)
#: ``"20ms"``: a time > 0.
PositiveTime = _unit(units.parse_time, allow_zero=False)
#: ``"1000B"``: bytes, > 0.
Size = _unit(units.parse_bytes)
#: ``"40B"``: bytes, >= 0 (``"0B"`` or bare ``0`` allowed).
SizeOrZero = _unit(units.parse_bytes, allow_zero=True)
#: ``"100pkt"`` or ``"150kB"``: a buffer limit.
Buffer = _unit(lambda v, f: units.parse_buffer(v, f))
#: ``"100kB"`` or ``"30pkt"`` (whole packets of payload).
Payload = _unit(_check_payload)
#: ``"inf"``, ``"100kB"`` or ``"30pkt"``.
PayloadOrInf = _unit(_check_payload_or_inf)
#: like Payload but fractional amounts are allowed (distribution parameters).
Amount = _unit(_check_amount)
#: ``"50/s"``.
Frequency = _unit(units.parse_frequency)
#: ``10`` or ``"10pkt"``: a whole number of packets >= 1.
Packets = _unit(_check_packets_or_int)


def packets_value(value: Any) -> int:
    """The integer behind a :data:`Packets` value."""
    if isinstance(value, int):
        return value
    return units.parse_packets(value)


#: custom error type -> (kind, context) of the unions above (a Discriminator's own
#: error context must be hashable, so it lives here)
_UNION_ERRORS: dict[str, tuple[str, dict[str, str]]] = {}


def _register(kind: str, ctx: dict[str, str]) -> str:
    name = f"{kind}_{len(_UNION_ERRORS)}"
    _UNION_ERRORS[name] = (kind, ctx)
    return name


def _member_tag(model: type[BaseModel], key: str) -> str:
    ann = model.model_fields[key].annotation
    (value,) = typing.get_args(ann)
    return value


def tagged_union(key: str, models: list[type[BaseModel]], what: str) -> Any:
    """A union of tables chosen by the value of ``key`` (``kind``, ``dist``, ...)."""
    tags = {_member_tag(m, key): m for m in models}
    known = ", ".join(f'"{t}"' for t in tags)

    def pick(value: Any) -> str | None:
        tag = value.get(key) if isinstance(value, dict) else getattr(value, key, None)
        return _TAG + tag if isinstance(tag, str) and tag in tags else None

    members = tuple(Annotated[m, Tag(_TAG + t)] for t, m in tags.items())
    return Annotated[
        Union[members],  # type: ignore[valid-type]
        Discriminator(
            pick,
            custom_error_type=_register("tagged_union", {"key": key, "known": known, "what": what}),
            custom_error_message=f"unknown {what}",
        ),
    ]


def shape_union(options: list[tuple[str, Any, Callable[[Any], bool]]], expected: str) -> Any:
    """A union chosen by the value's shape: ``options`` are (tag, type, predicate);
    the first predicate that holds picks the type. Tables in the options that are
    themselves tagged unions are best given with the predicate ``is_table``."""

    def pick(value: Any) -> str | None:
        for tag, _, pred in options:
            if pred(value):
                return _TAG + tag
        return None

    members = tuple(Annotated[t, Tag(_TAG + tag)] for tag, t, _ in options)
    return Annotated[
        Union[members],  # type: ignore[valid-type]
        Discriminator(
            pick,
            custom_error_type=_register("shape_union", {"expected": expected}),
            custom_error_message=f"expected {expected}",
        ),
    ]


def is_scalar(v: Any) -> bool:
    return isinstance(v, (str, int, float)) and not isinstance(v, bool)


def is_list(v: Any) -> bool:
    return isinstance(v, (list, tuple))


def is_table(v: Any) -> bool:
    return isinstance(v, (dict, BaseModel))


# ---------------------------------------------------------------------------
# errors


def dotted(loc: typing.Iterable[Any]) -> str:
    """``("flows", 2, "src")`` -> ``"flows[2].src"``."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif isinstance(part, str) and part.startswith(_TAG):
            continue
        else:
            out += ("." if out else "") + str(part)
    return out


def _unwrap(tp: Any) -> Any:
    """Strip Annotated and Optional around a type."""
    while True:
        origin = typing.get_origin(tp)
        if origin is Annotated:
            args = typing.get_args(tp)
            inner = args[0]
            if typing.get_origin(inner) is Union:
                return tp  # a tagged union: keep its metadata
            tp = inner
        elif origin is Union:
            args = [a for a in typing.get_args(tp) if a is not type(None)]
            if len(args) == 1:
                tp = args[0]
            else:
                return tp
        else:
            return tp


def _step(tp: Any, part: Any) -> Any:
    tp = _unwrap(tp)
    origin = typing.get_origin(tp)
    union = None
    if origin is Annotated:
        union = typing.get_args(tp)[0]
    elif origin is Union:
        union = tp
    if union is not None:  # a union of tagged members: pick the member by tag
        for member in typing.get_args(union):
            margs = typing.get_args(member)
            if any(isinstance(m, Tag) and m.tag == part for m in margs[1:]):
                return margs[0]
        return None
    if isinstance(part, str) and part.startswith(_TAG):
        return tp
    if origin in (list, tuple) and isinstance(part, int):
        return typing.get_args(tp)[0]
    if origin is dict:
        return typing.get_args(tp)[1]
    if isinstance(tp, type) and issubclass(tp, BaseModel) and isinstance(part, str):
        for name, info in tp.model_fields.items():
            if part in (name, info.alias):
                return info.annotation
    return None


def _model_at(root: type[BaseModel], loc: tuple[Any, ...]) -> type[BaseModel] | None:
    tp: Any = root
    for part in loc:
        tp = _step(tp, part)
        if tp is None:
            return None
    tp = _unwrap(tp)
    return tp if isinstance(tp, type) and issubclass(tp, BaseModel) else None


def _show_input(value: Any) -> str:
    if isinstance(value, (dict, list)):
        text = repr(value)
        return text if len(text) <= 60 else text[:57] + "..."
    return units._show(value)


def _one(root: type[BaseModel], err: dict[str, Any]) -> tuple[str, str]:
    loc = tuple(err["loc"])
    kind = err["type"]
    ctx = err.get("ctx") or {}
    if kind in _UNION_ERRORS:
        kind, ctx = _UNION_ERRORS[kind]
    value = err.get("input")
    if kind == "extra_forbidden":
        model = _model_at(root, loc[:-1])
        msg = "unknown field"
        if model is not None:
            names = [info.alias or name for name, info in model.model_fields.items()]
            msg += f" (known fields: {', '.join(names)})"
        return dotted(loc), msg
    if kind == "missing":
        return dotted(loc), "required field missing"
    if kind == "tagged_union":
        key = ctx["key"]
        tag = value.get(key) if isinstance(value, dict) else None
        if not isinstance(value, dict):
            return dotted(loc), f"expected a table with {key} = one of {ctx['known']}, got {_show_input(value)}"
        if tag is None:
            return dotted(loc + (key,)), f"required field missing (one of {ctx['known']})"
        return dotted(loc + (key,)), f"unknown {ctx['what']} {_show_input(tag)}; known: {ctx['known']}"
    if kind == "shape_union":
        if isinstance(value, dict) and "dist" in value:
            return dotted(loc + ("dist",)), f"unknown distribution {_show_input(value['dist'])}; expected {ctx['expected']}"
        return dotted(loc), f"expected {ctx['expected']}, got {_show_input(value)}"
    if kind == "field_error":
        return dotted(loc + (ctx["field"],)), err["msg"]
    if kind == "unit":
        return dotted(loc), err["msg"]
    msg = err["msg"].replace("Input should be", "should be")
    if kind not in ("model_type", "dict_type") or not isinstance(value, dict):
        msg += f", got {_show_input(value)}"
    return dotted(loc), msg


def user_error(root: type[BaseModel], exc: ValidationError, prefix: str = "") -> UserError:
    """One :class:`UserError` naming every field that ``exc`` complains about."""
    seen: list[tuple[str, str]] = []
    for err in exc.errors(include_url=False):
        item = _one(root, err)
        if item not in seen:
            seen.append(item)
    if len(seen) == 1:
        field, msg = seen[0]
        return UserError(msg, prefix + field if field else (prefix.rstrip(".") or None))
    lines = [f"{prefix}{f}: {m}" if f or prefix else m for f, m in seen[:20]]
    if len(seen) > 20:
        lines.append(f"... and {len(seen) - 20} more")
    return UserError(f"{len(seen)} problems in the scenario:\n  " + "\n  ".join(lines))
