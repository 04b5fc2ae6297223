"""How `hlo2penguin check`'s table fits its two name columns (module,
stage) to the terminal: a name too long is cut from its front where a word
starts, a module's program name kept whole, never so far that two rows
read the same."""

from __future__ import annotations

MIN_NAME = 8  # a name column is cut to no fewer characters (its start `…` included)


_WORD_END = "/._-"  # a name is cut where a word starts: after one of these


def from_front(name: str, width: int, keep: int = 0) -> str:
    """`name` in `width` characters: whole if it fits, else `…` and its end
    from the start of a word, never cutting into its last `keep` characters
    (the program's name): wider than `width` where it must be."""
    if len(name) <= width:
        return name
    starts = [i for i in range(1, len(name) - keep + 1) if name[i - 1] in _WORD_END]
    fits = [i for i in starts if len(name) - i <= width - 1]
    if fits:
        return "…" + name[min(fits):]
    if starts:
        return "…" + name[max(starts):]
    return name if keep else "…" + name[len(name) - (width - 1):]  # one word: its end, unless it is kept


def distinct_width(names: list[str], keeps: list[int] | None = None) -> int:
    """The fewest characters (at least MIN_NAME) in which `from_front` keeps
    the distinct `names` distinct; the longest name's length if none fewer does."""
    distinct = dict(zip(names, keeps or [0] * len(names)))
    longest = max(map(len, distinct), default=0)
    for width in range(min(MIN_NAME, longest), longest):
        if len({from_front(n, width, k) for n, k in distinct.items()}) == len(distinct):
            return width
    return longest


def name_widths(modules: list[str], stages: list[str], room: int, keeps: list[int] | None = None,
                 headers: tuple[str, str] = ("module", "stage")) -> tuple[int, int]:
    """The widths of the module and stage columns in `room` characters: the
    module whole where the stage keeps its distinct width, each at least
    its distinct width (past that the line is wider than `room`). Two rows
    differ in their module or in their stage, and each column keeps its
    different names different: no two rows read the same."""
    whole_m, whole_s = (max([len(h), *map(len, names)]) for h, names in zip(headers, (modules, stages)))
    if whole_m + 2 + whole_s <= room:
        return whole_m, whole_s
    least_m, least_s = (max(len(h), distinct_width(names, k)) for h, names, k in
                        zip(headers, (modules, stages), (keeps, None)))
    module = min(whole_m, max(least_m, room - 2 - least_s))
    return module, min(whole_s, max(least_s, room - 2 - module))
