"""Every legal reading of a concealed hand: one pair plus the groups of R5.

A concealed group is a tuple ``(shape, kind, wilds, wild_kinds)``: shape is ``seq`` (kind = its lowest card),
``pair``, ``trip``, ``quad`` or ``two`` (the two remaining copies of a kind flipped twice, R4);
``wilds`` counts the 百搭 cards standing in it (rugao, R8), ``wild_kinds`` the cards they stand for (a wild winning
card earns the shape bonus of the card it stands for, R8).

The search takes the lowest kind still held and decides every group that contains it, so each
reading is produced once. Wild cards fill the gaps of groups that hold natural cards, naturals
first; wilds left when the naturals are used up form whole groups of the kind worth most.
"""

from __future__ import annotations

from collections.abc import Callable

from .cards import N_PLAIN

Group = tuple[str, int, int, tuple[int, ...]]
Reading = tuple[Group, ...]

SEQ_OK = [k < 27 and k % 9 <= 6 for k in range(N_PLAIN)]  # a sequence may start here


def readings(
    counts: list[int],
    wilds: int,
    n_groups: int,
    flips: list[int],
    room: list[int],
    wild_group_value: Callable[[int, int], int],
    limit: int = 5000,
) -> list[Reading]:
    """All readings of ``counts`` (30 plain kinds) as one pair + ``n_groups`` groups.

    ``room[k]``: how many more copies of kind k a wild may stand for (4 − flips − held).
    ``wild_group_value(kind, size)``: points of a whole-wild concealed group, to pick its kind.
    Stops after ``limit`` readings (a safety net; real hands have far fewer).
    """
    cnt = list(counts[:N_PLAIN])
    room = list(room[:N_PLAIN])
    out: list[Reading] = []
    stack: list[Group] = []
    seen: set[Reading] = set()
    if sum(cnt) + wilds < 2 + 2 * n_groups:  # at least the pair and groups of 2 cards
        return out

    def emit() -> None:
        r = tuple(sorted(stack))
        if r not in seen:
            seen.add(r)
            out.append(r)

    def finish(w: int, pair_done: bool, ng: int) -> None:
        # naturals used up: w wilds must make the missing pair and groups on their own
        need = n_groups - ng
        if need < 0:
            return
        if w == 0:
            if pair_done and need == 0:
                emit()
            return
        pushed = 0
        if not pair_done:
            if w < 2:
                return
            k = next((k for k in range(N_PLAIN) if room[k] >= 2), None)
            if k is None:
                return
            stack.append(("pair", k, 2, (k, k)))
            room[k] -= 2
            w -= 2
            pushed = 1
        taken: list[tuple[int, int]] = []
        ok = True
        for g in range(need):
            # quads only where the count needs them (w − 3·groups left)
            size = 4 if w - 3 * (need - g) > 0 else 3
            best = max((k for k in range(N_PLAIN) if room[k] >= size),
                       key=lambda k: wild_group_value(k, size), default=None)
            if best is None or w < size:
                ok = False
                break
            shape = "quad" if size == 4 else ("trip" if flips[best] < 2 else "two")
            stack.append((shape, best, size, (best,) * size))
            room[best] -= size
            taken.append((best, size))
            w -= size
        if ok and w == 0:
            emit()
        for k, size in taken:
            room[k] += size
            stack.pop()
        if pushed:
            k = stack.pop()[1]
            room[k] += 2

    def rec(i: int, w: int, pair_done: bool, ng: int) -> None:
        if len(out) >= limit or ng > n_groups:
            return
        while i < N_PLAIN and cnt[i] == 0:
            i += 1
        if i == N_PLAIN:
            finish(w, pair_done, ng)
            return
        c = cnt[i]
        f = flips[i]
        options: list[tuple[str, int]] = [("", 0)]
        if not pair_done:
            options.append(("pair", 2))
        if f == 2:
            options.append(("two", 2))
        if f < 2:
            options.append(("trip", 3))
        if f == 0:
            options.append(("quad", 4))
        for shape, size in options:
            if not size:
                nats: tuple[int, ...] | range = (0,)
            elif w == 0:  # no wilds (most hands): the group is all natural or not at all
                if c < size:
                    continue
                nats = (size,)
            else:
                nats = range(min(c, size), max(1, size - w) - 1, -1)
            for nat in nats:
                wu = size - nat if size else 0
                if wu > room[i]:
                    continue
                rest = c - nat
                if shape:
                    stack.append((shape, i, wu, (i,) * wu))
                    room[i] -= wu
                cnt[i] -= nat
                sequences(i, rest, w - wu, pair_done or shape == "pair",
                          ng + (1 if shape and shape != "pair" else 0))
                cnt[i] += nat
                if shape:
                    room[i] += wu
                    stack.pop()

    def sequences(i: int, rest: int, w: int, pair_done: bool, ng: int) -> None:
        """Place ``rest`` copies of kind i in sequences where i is the lowest natural card."""
        if rest == 0:
            rec(i + 1, w, pair_done, ng)
            return
        if i >= 27:
            return
        if w == 0:
            if not SEQ_OK[i] or cnt[i + 1] < rest or cnt[i + 2] < rest:
                return
            cnt[i] -= rest
            cnt[i + 1] -= rest
            cnt[i + 2] -= rest
            for _ in range(rest):
                stack.append(("seq", i, 0, ()))
            rec(i + 1, 0, pair_done, ng + rest)
            for _ in range(rest):
                stack.pop()
            cnt[i] += rest
            cnt[i + 1] += rest
            cnt[i + 2] += rest
            return
        # with wilds: each copy sits at position 0, 1 or 2 of its sequence (lower slots wild)
        rank = i % 9
        placements: list[int] = [p for p in (0, 1, 2) if p <= rank and rank - p <= 6]
        _seq_combos(i, rest, placements, 0, w, pair_done, ng)

    def _seq_combos(i: int, rest: int, placements: list[int], start: int, w: int,
                    pair_done: bool, ng: int) -> None:
        if rest == 0:
            rec(i + 1, w, pair_done, ng)
            return
        for pi in range(start, len(placements)):
            p = placements[pi]
            s = i - p
            used: list[int] = []  # kinds taken from naturals (above i)
            wk: list[int] = []  # kinds filled by wilds
            ok = True
            for k in range(s, s + 3):
                if k == i:
                    continue
                if k > i and cnt[k] > 0:
                    cnt[k] -= 1
                    used.append(k)
                elif room[k] > 0 and len(wk) < w:
                    room[k] -= 1
                    wk.append(k)
                else:
                    ok = False
                    break
            if ok:
                cnt[i] -= 1
                stack.append(("seq", s, len(wk), tuple(wk)))
                _seq_combos(i, rest - 1, placements, pi, w - len(wk), pair_done, ng + 1)
                stack.pop()
                cnt[i] += 1
            for k in used:
                cnt[k] += 1
            for k in wk:
                room[k] += 1

    rec(0, wilds, False, 0)
    return out
