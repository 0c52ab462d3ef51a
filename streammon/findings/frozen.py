"""``FrozenMap``: the read-only mapping every report field is made of.

A ``dict`` that refuses changes, says which keys exist when asked for a missing
one, and — unlike ``types.MappingProxyType`` — pickles, deep-copies and goes
through ``dataclasses.asdict`` (which rebuilds it from its items).

>>> scores = FrozenMap({"acsa": 0.85, "gmean": 0.84}, noun="metric")
>>> scores["acsa"], dict(scores) == {"acsa": 0.85, "gmean": 0.84}
(0.85, True)
>>> scores["acssa"]
Traceback (most recent call last):
...
KeyError: "no metric 'acssa' here; the metrics are 'acsa', 'gmean'"
>>> scores["acsa"] = 1.0
Traceback (most recent call last):
...
TypeError: FrozenMap is read-only: 'acsa' cannot be changed
>>> import pickle
>>> pickle.loads(pickle.dumps(scores))["acssa"]
Traceback (most recent call last):
...
KeyError: "no metric 'acssa' here; the metrics are 'acsa', 'gmean'"
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping
from typing import Any, NoReturn, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

LISTED_KEYS = 40  # a KeyError names at most this many valid keys


class FrozenMap(dict[K, V]):
    """A read-only ``dict``; ``noun`` names its keys in the ``KeyError`` of a missing one."""

    __slots__ = ("_noun",)

    def __init__(self, items: Mapping[K, V] | Iterable[tuple[K, V]] = (), noun: str = "key") -> None:
        super().__init__(items)
        self._noun = noun

    def __missing__(self, key: object) -> NoReturn:
        plural = self._noun + ("es" if self._noun.endswith("s") else "s")
        if not self:
            raise KeyError(f"no {self._noun} {key!r} here: there are none")
        names = [repr(k) for k in list(self)[:LISTED_KEYS]]
        more = f" and {len(self) - LISTED_KEYS} more" if len(self) > LISTED_KEYS else ""
        raise KeyError(f"no {self._noun} {key!r} here; the {plural} are {', '.join(names)}{more}")

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (dict(self), self._noun))

    def __setitem__(self, key: K, value: V) -> NoReturn:
        raise TypeError(f"{type(self).__name__} is read-only: {key!r} cannot be changed")

    def _read_only(self, *args: object, **kwargs: object) -> NoReturn:
        raise TypeError(f"{type(self).__name__} is read-only")

    __delitem__ = __ior__ = clear = pop = popitem = setdefault = update = _read_only
