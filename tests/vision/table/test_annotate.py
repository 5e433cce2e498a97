"""Annotated photos: the font draws every label, and labels of a tight stair do not cover each other."""

import numpy as np


def test_annotated_photos_font_draws_every_mark_of_a_card_label():
    """The marks card_tags puts before a name (+ added, × left out, 将, how a declared group was made, ? unsure) and
    every card name are in the font the annotated photos are drawn with (a mark it lacks is drawn as nothing)."""
    from fontTools.ttLib import TTFont

    from scoring.cards import NAMES_ZH
    from vision.fonts import UI_FONT, font_path

    cmap = TTFont(str(font_path(UI_FONT))).getBestCmap()
    from scoring.hand import MELD_TAG

    marks = "+×将?" + "".join(MELD_TAG.values()) + "".join(NAMES_ZH.values())
    assert [ch for ch in marks if ord(ch) not in cmap] == []


def test_labels_of_a_tight_stair_do_not_cover_each_other_and_loose_cards_keep_theirs():
    """annotate.place_labels: in a stair whose strips are narrower than the names, every label gets a place of
    its own beyond the cards' ends; labels that fit stay on their own cards."""
    from vision.table.annotate import anchors, place_labels

    def card(x, y, w=60, length=180):
        return [[x, y], [x + w, y], [x + w, y + length], [x, y + length]]

    stair = np.array([card(100 + 14 * k, 300) for k in range(10)], np.float64)  # 14 px of each card shows
    lengths = np.full(10, 180.0)
    axes = np.tile([0.0, 1.0], (10, 1))
    points, strips, cards = anchors(stair, (1000, 1000), lengths)
    assert np.all(strips < 40)  # what no other box overlaps: a strip of each (which card lies on top is not known)
    assert np.all(points[:, 0] < stair[:, 1, 0]) and np.all(points[:, 0] > stair[:, 0, 0])
    sizes = np.tile([64.0, 22.0], (10, 1))
    rects = place_labels(points, axes, lengths, sizes, (1000, 1000), sizes[:, 0] <= 1.5 * strips, cards)
    for i in range(10):
        for j in range(i + 1, 10):
            a, b = rects[i], rects[j]
            assert a[2] <= b[0] or b[2] <= a[0] or a[3] <= b[1] or b[3] <= a[1], (i, j)
    beyond = (rects[:, 1] >= 300 + 180) | (rects[:, 3] <= 300)
    assert beyond.all()  # the names lie beyond the cards, joined to them by lines
    row = np.array([card(100 + 80 * k, 300) for k in range(5)], np.float64)
    points, strips, cards = anchors(row, (1000, 1000), lengths[:5])
    rects = place_labels(points, axes[:5], lengths[:5], sizes[:5], (1000, 1000), sizes[:5, 0] <= 1.5 * strips, cards)
    centres = (rects[:, :2] + rects[:, 2:]) / 2
    assert np.allclose(centres, row.mean(1), atol=1)
