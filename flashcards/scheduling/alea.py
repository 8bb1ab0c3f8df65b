"""Alea PRNG with the Mash hash (Johannes Baagøe), as used by ts-fsrs for deterministic fuzz.

All arithmetic is IEEE-754 double arithmetic in the same order as the JavaScript source, with the
JS integer coercions (``>>> 0`` and ``| 0``) reproduced explicitly, so the outputs are bit-equal to
the clients'.
"""

from __future__ import annotations

from dataclasses import dataclass

from .jsnum import to_int32, to_uint32

__all__ = ["Alea", "AleaState", "Mash"]

_TWO_POW_MINUS_32 = 2.3283064365386963e-10  # exactly 2**-32
_MASH_INITIAL_N = float(0xEFC8249D)
_MASH_MULTIPLIER = 0.02519603282416938
_ALEA_MULTIPLIER = 2_091_639.0


class Mash:
    """Stateful string hash: every call continues from the state left by the previous call."""

    def __init__(self) -> None:
        self._n: float = _MASH_INITIAL_N

    def __call__(self, data: str) -> float:
        n = self._n
        for code_unit in _utf16_code_units(data):
            n += code_unit
            h = _MASH_MULTIPLIER * n
            n = float(to_uint32(h))
            h -= n
            h *= n
            n = float(to_uint32(h))
            h -= n
            n += h * 4_294_967_296.0
        self._n = n
        return to_uint32(n) * _TWO_POW_MINUS_32


def _utf16_code_units(data: str) -> list[int]:
    # JS strings are UTF-16; charCodeAt yields surrogate halves for astral characters.
    encoded = data.encode("utf-16-le", "surrogatepass")
    return [int.from_bytes(encoded[i : i + 2], "little") for i in range(0, len(encoded), 2)]


@dataclass(frozen=True)
class AleaState:
    c: float
    s0: float
    s1: float
    s2: float


class Alea:
    """Alea generator seeded from a string; ``next()`` returns a double in [0, 1)."""

    def __init__(self, seed: str) -> None:
        mash = Mash()
        self._c: float = 1.0
        self._s0: float = mash(" ")
        self._s1: float = mash(" ")
        self._s2: float = mash(" ")

        self._s0 -= mash(seed)
        if self._s0 < 0:
            self._s0 += 1
        self._s1 -= mash(seed)
        if self._s1 < 0:
            self._s1 += 1
        self._s2 -= mash(seed)
        if self._s2 < 0:
            self._s2 += 1

    @classmethod
    def from_state(cls, state: AleaState) -> Alea:
        generator = cls.__new__(cls)
        generator._c = state.c
        generator._s0 = state.s0
        generator._s1 = state.s1
        generator._s2 = state.s2
        return generator

    def state(self) -> AleaState:
        return AleaState(c=self._c, s0=self._s0, s1=self._s1, s2=self._s2)

    def next(self) -> float:
        t = _ALEA_MULTIPLIER * self._s0 + self._c * _TWO_POW_MINUS_32
        self._s0 = self._s1
        self._s1 = self._s2
        self._c = float(to_int32(t))
        self._s2 = t - self._c
        return self._s2
