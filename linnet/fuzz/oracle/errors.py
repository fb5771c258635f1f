"""What the oracle raises instead of giving an answer.

Why two kinds: a fuzzer must tell apart a program whose result the language does not define
(skip the case: no backend can be wrong about it) from a construct the oracle cannot yet
evaluate (a gap of the oracle, to be fixed). Neither is ever replaced by a guessed value.
"""

from __future__ import annotations

__all__ = ["OracleError", "OracleUndefined"]


class OracleError(Exception):
    """The oracle cannot evaluate this case: an unsupported construct (named in the
    message), a program with errors, or inputs that do not fit the entry."""


class OracleUndefined(Exception):
    """The case reaches behaviour the language leaves undefined (an index out of range, an
    integer division by zero, a float cast to an integer it does not fit, ...): there is no
    right answer to compare against."""
