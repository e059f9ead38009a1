"""The statistics dependency graph: which calculators to run, in which order (Kahn's algorithm).

Statistics already present in the data are *given*. Every other statistic an estimator
or a generation metric depends on needs exactly one producing :class:`StatCalculator`;
the calculators chosen are ordered so each runs after the producers of its
dependencies, and each runs once for all estimators. A statistic with no producer, and
a cycle among calculators, are :class:`StatDependencyError` naming the statistics.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping, Sequence

from assay.errors import InvalidParameterError
from assay.uncertainty.base import StatCalculator

__all__ = ["StatDependencyError", "plan_calculators"]


class StatDependencyError(InvalidParameterError):
    """A statistic has no producer, or the calculators depend on each other in a cycle."""


def plan_calculators(
    needed: Mapping[str, Sequence[str]] | Iterable[str],
    given: Iterable[str],
    calculators: Sequence[StatCalculator],
) -> list[StatCalculator]:
    """The calculators to run, in dependency order.

    Parameters
    ----------
    needed : mapping stat -> names of who needs it (or an iterable of stats)
    given : the statistics already available (the data's fields)
    calculators : candidates; the first one producing a statistic is its producer

    Raises
    ------
    StatDependencyError
        naming the missing statistic and who needs it, or the statistics on a cycle.
    """
    if not isinstance(needed, Mapping):
        needed = {s: ["the request"] for s in needed}
    given = set(given)
    producer: dict[str, StatCalculator] = {}
    for calculator in calculators:
        for stat in calculator.stats:
            producer.setdefault(stat, calculator)
    chosen: list[StatCalculator] = []
    seen: set[int] = set()
    stack = [(stat, list(who)) for stat, who in needed.items()]
    while stack:
        stat, who = stack.pop()
        if stat in given:
            continue
        calc = producer.get(stat)
        if calc is None:
            avail = ", ".join(sorted(given)) or "none"
            raise StatDependencyError(
                f"No statistic {stat!r} (needed by {', '.join(who)}): it is not in the data and no stat "
                f"calculator produces it. Fields in the data: {avail}."
            )
        if id(calc) in seen:
            continue
        seen.add(id(calc))
        chosen.append(calc)
        label = f"stat calculator {calc.name or type(calc).__name__!r}"
        stack.extend((dep, [label]) for dep in calc.dependencies)
    # Kahn's algorithm over the chosen calculators
    made_by = {stat: c for c in chosen for stat in c.stats if stat not in given and producer.get(stat) is c}
    indeg = {id(c): 0 for c in chosen}
    users: dict[int, list[StatCalculator]] = {id(c): [] for c in chosen}
    for c in chosen:
        for dep in set(c.dependencies):
            p = made_by.get(dep)
            if p is not None:
                indeg[id(c)] += 1
                users[id(p)].append(c)
    queue = deque(c for c in chosen if indeg[id(c)] == 0)
    order: list[StatCalculator] = []
    while queue:
        c = queue.popleft()
        order.append(c)
        for u in users[id(c)]:
            indeg[id(u)] -= 1
            if indeg[id(u)] == 0:
                queue.append(u)
    if len(order) != len(chosen):
        stuck = [c for c in chosen if indeg[id(c)] > 0]
        stats = sorted({d for c in stuck for d in c.dependencies if made_by.get(d) in stuck})
        names = ", ".join(repr(c.name or type(c).__name__) for c in stuck)
        raise StatDependencyError(
            f"The stat calculators {names} depend on each other in a cycle through the statistics "
            f"{', '.join(map(repr, stats))}."
        )
    return order
