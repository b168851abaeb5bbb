"""A launched script's reading, kept for the launches whose flags it did not tell apart.

Several launch lines often start one script with flags that differ only where the script's
reading does not look (a learning rate, an output folder, the data): read with each launch's
flags (:func:`.python_source.model_keys`), it gives the same answer. :func:`read_once` hands
the reading a :class:`ReadFlags` that notes every flag it asks for, and gives its answer
again to a later launch whose flags agree on those (value and where each is written; a flag
neither gives agrees), a copy each time (the caller may mark what it gets). A reading that
went over all the flags (iterated them) is not kept.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Callable, Hashable, Iterator, Mapping
from typing import Any, TypeVar

from .tree_facts import remembered

T = TypeVar("T")


class ReadFlags(Mapping[str, Any]):
    """A launch's flags, noting which names are read (:attr:`names`) and whether all were
    (:attr:`whole`: iterated, counted or compared)."""

    def __init__(self, flags: Mapping[str, Any]):
        self._flags = flags
        self.names: set[str] = set()
        self.whole = False

    def __getitem__(self, name: str) -> Any:
        self.names.add(name)
        return self._flags[name]

    def get(self, name: str, default: Any = None) -> Any:
        self.names.add(name)
        return self._flags.get(name, default)

    def __contains__(self, name: object) -> bool:
        if isinstance(name, str):
            self.names.add(name)
        return name in self._flags

    def __iter__(self) -> Iterator[str]:
        self.whole = True
        return iter(self._flags)

    def __len__(self) -> int:
        self.whole = True
        return len(self._flags)


def read_once(tree: ast.AST, key: Hashable, flags: Mapping[str, Any], read: Callable[[Mapping[str, Any]], T]) -> T:
    """``read(flags)``, the answer of an earlier read of ``tree`` under ``key`` (every input
    but the tree and the flags) whose flags agree with ``flags`` on every name it read."""
    kept: list[tuple[dict[str, Any], T]] = remembered(tree, ("read-once", key), list)
    for asked, answer in kept:
        if all(flags.get(name) == given for name, given in asked.items()):
            return copy.deepcopy(answer)
    noted = ReadFlags(flags)
    answer = read(noted)
    if not noted.whole:
        kept.append(({name: flags.get(name) for name in noted.names}, copy.deepcopy(answer)))
    return answer


__all__ = ["ReadFlags", "read_once"]
