"""Recognitions and hands the photo → hu tests build."""

from dataclasses import replace

from vision.table.context import PhotoContext, PhotoError
from vision.table.pipeline import score_recognition
from vision.types import Card, Recognition


def _recognition_from_gt(gt, noise=None):
    cards = []
    for c in gt["cards"]:
        alts = [(c["code"], 0.97), ("1t" if c["code"] != "1t" else "2t", 0.02)]
        cards.append(Card(c["code"], 0.97, alts, c["quad"]))
    if noise:
        noise(cards)
    return Recognition(gt["width"], gt["height"], cards)


def _ctx(gt):
    ctx = PhotoContext.from_hand_file(gt["hand"])
    ctx.jiang = None  # read them from the photo
    return ctx


def _sure(gt):
    """The recognition of ``gt`` with every box a sure card (none doubtful), and the hand's card indices."""
    rec = _recognition_from_gt(gt)
    for c in rec.cards:
        c.det_score = 0.9
    return rec, [i for i, g in enumerate(gt["cards"]) if g["group"] == "hand"]


def _missed(rec, i):
    """Card ``i`` missed by the detector: gone from the cards, offered as a spare; it and the recognition with it."""
    card = rec.cards[i]
    rec.cards = [c for k, c in enumerate(rec.cards) if k != i]
    rec.spares = [Card(card.code, 0.95, card.alternatives, card.quad, det_score=0.4)]
    return card, Recognition(rec.width, rec.height, [*rec.cards, rec.spares[0]])


def _misread(card, p_true=0.25, k=0):
    """``card`` read as another kind (the ``k``-th of three), its own kind the second reading."""
    wrong = [c for c in ("qz", "hh", "bh", "9w") if c != card.code][k]
    return Card(wrong, 1 - p_true, [(wrong, 1 - p_true), (card.code, p_true)], card.quad, det_score=card.det_score)


def _wins_as_seen(rec, gt):
    try:
        return score_recognition(rec, _ctx(gt), repair_on=False).result.is_win
    except PhotoError:  # e.g. five of a kind
        return False


W, H = 40.0, 187.0  # a card's width and length in the photos laid out below, pixels


def _card(code: str, x: float, y: float) -> Card:
    return Card(code, 0.97, [(code, 0.97)], [[x, y], [x + W, y], [x + W, y + H], [x, y + H]], det_score=0.9)


def _two_row_hand(gap: float) -> Recognition:
    """A hand of 21 cards laid in two overlapped rows, the second sorted into 2w×4, qz×3, 7t×3 (runs of equal cards,
    ``gap`` card widths more between runs than between the cards of a run), a quad 1b×4 declared apart and the 将 5w 4b
    set apart (test hands 000189's cards)."""
    w, h, step, card = W, H, 22.0, _card
    first = "6t 6t 6t bh bh bh 9b 9b 1t 1t 1t".split()
    second = "2w 2w 2w 2w qz qz qz 7t 7t 7t".split()
    cards = [card(c, 300 + k * step, 100) for k, c in enumerate(first)]
    x = 300.0
    for k, c in enumerate(second):
        if k and c != second[k - 1]:
            x += gap * w
        cards.append(card(c, x, 100 + h + 30))
        x += step
    cards += [card("1b", 300 + k * (w + 4), 650) for k in range(4)]
    cards += [card("5w", 40, 200), card("4b", 40 + w + 4, 200)]
    return Recognition(1280, 960, cards)


def _row_with_group(gap: float, space: float = 0.1) -> Recognition:
    """A hand of 20 cards side by side in a row (``space`` card widths between them), then a pong 1b×3 laid at its end
    ``gap`` card widths from it, the 将 9b 8t set apart (test hands 000119's cards)."""
    hand = "8w 7w 6w 3w 2w 1w 9b 9b 7t 6t 5t 8b 8b 8b 5t 4t 3t 7t 6t 5t".split()
    step = (1 + space) * W
    cards = [_card(c, 100 + k * step, 300) for k, c in enumerate(hand)]
    x = 100 + len(hand) * step - space * W + gap * W
    cards += [_card("1b", x + k * step, 300) for k in range(3)]
    return Recognition(1600, 960, cards + [_card("9b", 300, 650), _card("8t", 300 + 1.1 * W, 650)])


def _twice_flipped_hand(beside: bool = False) -> Recognition:
    """val_hands4 000214's cards: 15 concealed in a row, a pong 1b×3 and a quad 2t×4 declared, 4b 4b flipped as the 将
    and the two other 4b laid apart as the group the two remaining copies make (R4); ``beside``: those two laid close
    beside the quad, one cluster with it (distil_hands 000104's 9w×2 beside a pong)."""
    hand = "1t 1t 1t 3w 4w 5w 5b 5b 5b 5b 8w 8w 8w qz qz".split()
    cards = [_card(c, 100 + k * 1.1 * W, 100) for k, c in enumerate(hand)]
    x = 100.0
    for code, n in (("1b", 3), ("2t", 4), ("4b", 2), ("4b", 2)):
        if beside and code == "4b" and n == 2 and cards[-1].code == "2t":
            x -= 6 * W - 4.4 * W  # right after the quad's last card, as close as its cards lie
        cards += [_card(code, x + k * 1.1 * W, 100 + 2 * H) for k in range(n)]
        x += 6 * W
    return Recognition(2000, 1200, cards)


XI_ER = PhotoContext(ruleset="nantong-single", options={"xi_er": True}, win="2b", self_drawn=True)


def _single_hand(held: list[str], doubtful: Card, jiang: str) -> list[Card]:
    """A nantong-single win (1t–9t, 2w–7w, 6b–8b, 2b 2b and a 3b pong on the table) holding the extras ``held``, then
    the card ``doubtful`` (its corners are set here) last in the row, and the 将 ``jiang`` set apart."""
    hand = "1t 2t 3t 4t 5t 6t 7t 8t 9t 2w 3w 4w 5w 6w 7w 6b 7b 8b 2b 2b".split() + held
    cards = [_card(c, 100 + k * 1.1 * W, 100) for k, c in enumerate(hand)]
    cards.append(replace(doubtful, quad=_card(doubtful.code, 100 + len(hand) * 1.1 * W, 100).quad))
    cards += [_card("3b", 100 + k * 1.1 * W, 100 + 2 * H) for k in range(3)]
    return cards + [_card(jiang, 100, 100 + 4 * H)]
