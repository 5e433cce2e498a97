"""Random legal winning hands (pair + seven groups, R5), for tests, benchmarks and synthetic photos.

``random_winning_hand(rng)`` returns a hand-file dict (the format of ``changpai score-hand``).
"""

from __future__ import annotations

import random
from typing import Any

from .cards import CODES, EXTRAS, INDEX, N_PLAIN

PLAIN = list(range(N_PLAIN))


def _deck_room(jiang: list[int]) -> list[int]:
    room = [4] * N_PLAIN
    for j in jiang:
        room[j] -= 1
    return room


WILDS = [INDEX[c] for c in EXTRAS]  # 福禄寿禧财: one of each, wild in rugao (R8)


def random_winning_hand(
    rng: random.Random,
    ruleset: str = "nantong-double",
    p_seq: float = 0.5,
    p_declared: float = 0.25,
    max_tries: int = 200,
    wilds: int = 0,
    xi_er: int | None = None,
) -> dict[str, Any]:
    """Draw jiang, then seven groups and a pair within the deck's limits; a winning card among the
    concealed cards, self-drawn or not. ``p_seq`` is the share of sequences among the groups. ``wilds``
    (rugao): that many concealed cards, none of a kind held from the deal, are 福禄寿禧财 standing for them
    (R8: a wild stands for any kind within its 4 copies), the winning card not among them; 0 draws exactly
    what it drew before wilds existed. ``xi_er`` (nantong-single): the 喜儿 option on, and the hand holds that
    many of the extras as bonus cards besides its groups (R7); None: the option off, the draws as before."""
    if wilds and (ruleset != "rugao" or wilds > len(WILDS)):
        raise ValueError(f"Wild cards are rugao's, at most {len(WILDS)} of them.")
    if xi_er is not None and (ruleset != "nantong-single" or not 0 <= xi_er <= len(WILDS)):
        raise ValueError(f"喜儿 (xi_er) are nantong-single's, at most {len(WILDS)} of them.")
    n_jiang = 1 if ruleset == "nantong-single" else 2
    for _ in range(max_tries):
        jiang = [rng.choice(PLAIN) for _ in range(n_jiang)]
        room = _deck_room(jiang)
        if min(room) < 0:
            continue
        declared: list[dict[str, Any]] = []
        concealed: list[int] = []
        from_deal: list[int] = []
        ok = True
        for _g in range(7):
            placed = False
            for _t in range(30):
                if rng.random() < p_seq:
                    s = rng.randrange(3) * 9 + rng.randrange(7)
                    if all(room[s + j] > 0 for j in range(3)):
                        for j in range(3):
                            room[s + j] -= 1
                            concealed.append(s + j)
                        placed = True
                        break
                    continue
                k = rng.choice(PLAIN)
                flips = jiang.count(k)
                r = rng.random()
                if flips == 2:
                    n, how = 2, rng.choice(["concealed", "concealed_kong", "dealt_kong"])
                elif r < 0.15 and flips == 0:
                    n, how = 4, rng.choice(["exposed_kong", "concealed_kong", "dealt_kong", "concealed"])
                else:
                    n = 3
                    how = "pong" if rng.random() < p_declared else "concealed"
                if room[k] < n:
                    continue
                room[k] -= n
                if how == "concealed":
                    concealed.extend([k] * n)
                    if n != 3 or flips:
                        if rng.random() < 0.3:
                            from_deal.append(k)
                else:
                    declared.append({"cards": [CODES[k]] * n, "how": how})
                placed = True
                break
            if not placed:
                ok = False
                break
        if not ok:
            continue
        pairs = [k for k in PLAIN if room[k] >= 2]
        if not pairs:
            continue
        p = rng.choice(pairs)
        room[p] -= 2
        concealed.extend([p, p])
        rng.shuffle(concealed)
        if wilds:
            may = [i for i, c in enumerate(concealed) if c not in from_deal]
            if len(may) <= wilds:
                continue
            for i, w in zip(rng.sample(may, wilds), rng.sample(WILDS, wilds), strict=True):
                concealed[i] = w
        win = rng.choice([c for c in concealed if c < N_PLAIN] if wilds else concealed)
        if xi_er:
            concealed += rng.sample(WILDS, xi_er)
        return {
            "ruleset": ruleset,
            "jiang": [CODES[j] for j in jiang],
            "declared": declared,
            "concealed": [CODES[c] for c in concealed],
            "from_deal": sorted({CODES[k] for k in from_deal}),
            "win": {"card": CODES[win], "self_drawn": rng.random() < 0.4},
            "dealer": False,
            "events": [],
            "options": {} if xi_er is None else {"xi_er": True},
        }
    raise RuntimeError("could not draw a winning hand")
