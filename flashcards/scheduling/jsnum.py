"""JavaScript number semantics needed for bit-exact parity with the JS/Swift/Kotlin schedulers.

Web and phone clients run the scheduler in JavaScript-compatible arithmetic, so every place where
JS and Python differ (integer coercions, ``Math.round``, ``toFixed``, ``String(number)``) goes
through one of these helpers instead of the Python built-ins.
"""

from __future__ import annotations

import math
from decimal import ROUND_HALF_UP, Decimal, localcontext

__all__ = [
    "js_number_to_string",
    "js_round",
    "js_to_fixed",
    "to_int32",
    "to_uint32",
]

_TWO_32 = 1 << 32
_TWO_31 = 1 << 31


def to_uint32(value: float) -> int:
    """ECMAScript ToUint32, i.e. the result of ``value >>> 0``."""
    if math.isnan(value) or math.isinf(value):
        return 0
    # Python's % is always non-negative, which is exactly the modulo ToUint32 specifies.
    return math.trunc(value) % _TWO_32


def to_int32(value: float) -> int:
    """ECMAScript ToInt32, i.e. the result of ``value | 0``."""
    unsigned = to_uint32(value)
    return unsigned - _TWO_32 if unsigned >= _TWO_31 else unsigned


def js_round(value: float) -> int:
    """``Math.round``: ties go towards +infinity (Python's ``round`` goes to even).

    Comparing the exact fractional part avoids the classic ``floor(x + 0.5)`` error on
    0.49999999999999994, which modern JS engines do not make either.
    """
    floor = math.floor(value)
    return floor + 1 if value - floor >= 0.5 else floor


def js_to_fixed(value: float, digits: int) -> str:
    """``Number.prototype.toFixed``: rounds the exact binary value, ties away from zero."""
    if not 0 <= digits <= 100:
        raise ValueError("toFixed() digits must be between 0 and 100")
    if math.isnan(value):
        return "NaN"
    sign = ""
    # -0 is not < 0 in JS, so (-0).toFixed(n) has no minus sign; tiny negatives keep theirs.
    if value < 0:
        sign = "-"
        value = -value
    elif value == 0:
        value = 0.0  # drop the sign of -0 so Decimal does not print "-0"
    if value >= 1e21:
        return sign + js_number_to_string(value)
    exact = Decimal(value)  # exact binary expansion, no rounding yet
    with localcontext() as ctx:
        # value < 1e21 gives at most 21 integer digits; keep room so quantize never fails.
        ctx.prec = 22 + digits + 10
        rounded = exact.quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP)
    return sign + format(rounded, "f")


def js_number_to_string(value: float) -> str:
    """``String(number)`` per ECMAScript Number::toString (shortest round-trip digits).

    Python's ``repr`` already yields the shortest correctly rounded digit string; only the layout
    differs (JS switches to exponent form at 1e21 and below 1e-6, and never prints ``.0``).
    """
    if math.isnan(value):
        return "NaN"
    if value == 0:
        return "0"  # covers -0, which JS prints as "0"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"

    sign = "-" if value < 0 else ""
    text = repr(abs(value))
    mantissa, _, exponent_text = text.partition("e")
    exponent = int(exponent_text) if exponent_text else 0
    integer_part, _, fraction_part = mantissa.partition(".")
    digits = integer_part + fraction_part
    # Normalise to value = 0.<digits> * 10**point with no leading/trailing zeros.
    point = len(integer_part) + exponent
    stripped = digits.lstrip("0")
    point -= len(digits) - len(stripped)
    digits = stripped.rstrip("0")
    k = len(digits)
    n = point

    if k <= n <= 21:
        body = digits + "0" * (n - k)
    elif 0 < n <= 21:
        body = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        body = "0." + "0" * (-n) + digits
    else:
        e = n - 1
        exponent_sign = "+" if e >= 0 else "-"
        head = digits if k == 1 else digits[0] + "." + digits[1:]
        body = f"{head}e{exponent_sign}{abs(e)}"
    return sign + body
