"""Queue disciplines as scenario files write them.

Every link has a ``qdisc`` table chosen by its ``kind``::

    qdisc = { kind = "droptail", limit = "100pkt" }

To add a discipline: write one model below (a ``kind`` literal, its parameters with
their defaults and units, and ``to_spec`` returning the matching variant of Rust's
``QdiscSpec`` in ``crates/qdisc/src/spec.rs``), then append it to ``QDISC_MODELS``.
The scenario schema, its error messages and the user guide's list of kinds all read
that list.
"""

from typing import Any, ClassVar, Literal

from pydantic import Field

from .schema import Buffer, Model, tagged_union
from .units import parse_buffer


class DropTail(Model):
    """First in, first out; an arrival that does not fit is dropped (Linux ``pfifo`` /
    ``bfifo``, ns-2 ``DropTail``)."""

    summary: ClassVar[str] = "FIFO; drops arrivals that do not fit"

    kind: Literal["droptail"]
    limit: Buffer = Field(
        description='Buffer size, in packets ("100pkt") or bytes ("150kB"). Required.'
    )

    def to_spec(self, field: str) -> dict[str, Any]:
        return {"kind": "droptail", "limit": parse_buffer(self.limit, f"{field}.limit")}


QDISC_MODELS: list[type[Model]] = [DropTail]

Qdisc = tagged_union("kind", QDISC_MODELS, "queue discipline")

#: The default for every link whose ``qdisc`` is not given: a DropTail so large it
#: never drops in practice (100,000 packets).
LARGE_QDISC: dict[str, Any] = {"kind": "droptail", "limit": "100000pkt"}


def large_qdisc() -> Model:
    return DropTail.model_validate(LARGE_QDISC)
