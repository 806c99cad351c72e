"""TOML writing for scenarios (the standard library only reads TOML): tomli-w, with
``None`` values left out (TOML has no null; an unset field is absent). Output is
deterministic: keys keep the order of the dictionaries given."""

from __future__ import annotations

from typing import Any

import tomli_w


def _present(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _present(v) for k, v in value.items() if v is not None}
    if isinstance(value, (list, tuple)):
        return [_present(v) for v in value if v is not None]
    return value


def dumps(data: dict[str, Any]) -> str:
    """``data`` as TOML text."""
    return tomli_w.dumps(_present(data))
