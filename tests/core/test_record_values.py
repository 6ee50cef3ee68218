"""Recorded kernel arguments rebuild as the values the program passed, or say why they cannot."""

from __future__ import annotations

import dataclasses
import enum
import json
import math
from typing import NamedTuple

import pytest
from tilescope.core.record.record_values import TAG, Unrecordable, describe, encode
from tilescope.core.worker.record_rebuild import decode


class Mode(enum.Enum):
    FAST = "fast"


@dataclasses.dataclass(frozen=True)
class Tiles:
    block: tuple[int, int] = (64, 64)
    mode: Mode = Mode.FAST
    extra: dict[str, int] = dataclasses.field(default_factory=dict)


class Pair(NamedTuple):
    a: int
    b: int


def _round_trip(value: object) -> object:
    return decode(json.loads(json.dumps(encode(value))))


def test_structured_arguments_round_trip_through_json() -> None:
    value = Tiles(block=(128, 32), extra={"k": 2})
    assert _round_trip(value) == value
    assert _round_trip(Mode.FAST) is Mode.FAST
    assert _round_trip((1, (2, 3), [4])) == (1, (2, 3), [4])
    assert _round_trip(Pair(1, 2)) == Pair(1, 2) and type(_round_trip(Pair(1, 2))) is Pair
    assert _round_trip(math.sqrt) is math.sqrt and _round_trip(Tiles) is Tiles
    assert describe(encode(value)) == "Tiles(block=(128, 32), mode=Mode.FAST, extra={'k': 2})"


def test_dtypes_come_back_as_dtypes_not_strings() -> None:
    torch = pytest.importorskip("torch")
    T = pytest.importorskip("tilelang.language")
    assert encode(torch.float16) == {TAG: "torch.dtype", "name": "float16"}
    assert _round_trip(torch.bfloat16) is torch.bfloat16
    rebuilt = _round_trip(T.float32)
    assert rebuilt == "float32" and type(rebuilt) is type(T.float32) and rebuilt.bytes == 4


def test_values_without_a_recorded_form_say_why() -> None:
    def local() -> None: ...

    with pytest.raises(Unrecordable, match="defined inside a function"):
        encode(local)
    with pytest.raises(Unrecordable, match="lambda"):
        encode(lambda: 0)
    with pytest.raises(Unrecordable, match="keys are not all strings"):
        encode({1: 2})
    with pytest.raises(Unrecordable, match="no recorded form"):
        encode(object())
