"""Pair expected tool calls with actual ones: maximum matching, or an in-order subsequence."""

from __future__ import annotations

from collections.abc import Callable, Sequence

Fits = Callable[[int, int], bool]  # (expected index, actual index) -> may they be paired?


def match_any_order(expected: int, actual: int, fits: Fits) -> dict[int, int]:
    """A maximum bipartite matching (Kuhn's augmenting paths): expected index -> actual index.

    Two calls to the same tool with different arguments match in either order,
    which a greedy first-fit pairing would miss.
    """
    edges = [[j for j in range(actual) if fits(i, j)] for i in range(expected)]
    owner: dict[int, int] = {}  # actual -> expected

    def augment(i: int, seen: set[int]) -> bool:
        for j in edges[i]:
            if j in seen:
                continue
            seen.add(j)
            if j not in owner or augment(owner[j], seen):
                owner[j] = i
                return True
        return False

    for i in range(expected):
        augment(i, set())
    return {i: j for j, i in owner.items()}


def _greedy_in_order(expected: int, actual: int, fits: Fits) -> dict[int, int]:
    pairs: dict[int, int] = {}
    j = 0
    for i in range(expected):
        while j < actual and not fits(i, j):
            j += 1
        if j == actual:
            break
        pairs[i] = j
        j += 1
    return pairs


def match_in_order(expected: int, actual: int, fits: Fits) -> dict[int, int]:
    """The longest in-order pairing (expected order kept, actual calls may sit in between)."""
    greedy = _greedy_in_order(expected, actual, fits)
    if len(greedy) == expected:  # everything paired: nothing longer exists (the common case)
        return greedy
    # best[i][j]: most pairs using expected[i:] and actual[j:]
    best = [[0] * (actual + 1) for _ in range(expected + 1)]
    for i in range(expected - 1, -1, -1):
        for j in range(actual - 1, -1, -1):
            skip = max(best[i + 1][j], best[i][j + 1])
            take = best[i + 1][j + 1] + 1 if fits(i, j) else 0
            best[i][j] = max(skip, take)
    pairs: dict[int, int] = {}
    i = j = 0
    while i < expected and j < actual:
        if fits(i, j) and best[i][j] == best[i + 1][j + 1] + 1:
            pairs[i] = j
            i, j = i + 1, j + 1
        elif best[i + 1][j] >= best[i][j + 1]:
            i += 1
        else:
            j += 1
    return pairs


def match_calls(
    names: Sequence[str], actual: Sequence[str], holds: Fits, *, strict_order: bool
) -> dict[int, int]:
    """Pair expected calls (by name) with actual calls whose name is equal and invariants hold."""

    if not strict_order and len(set(names)) == len(names) and len(set(actual)) == len(actual):
        return _by_name(names, actual, holds)

    def fits(i: int, j: int) -> bool:
        return names[i] == actual[j] and holds(i, j)

    matcher = match_in_order if strict_order else match_any_order
    return matcher(len(names), len(actual), fits)


def _by_name(names: Sequence[str], actual: Sequence[str], holds: Fits) -> dict[int, int]:
    """The maximum matching where no name repeats on either side: each expected call has one
    candidate, which no other expected call wants, so augmenting paths find nothing more."""
    where = {name: j for j, name in enumerate(actual)}
    return {
        i: where[name] for i, name in enumerate(names) if name in where and holds(i, where[name])
    }
