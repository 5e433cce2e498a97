"""geometry.rows_of: the cards' rows in a tilted photo, whichever way round each card lies."""

import numpy as np

from vision.infer.geometry import rows_of

LENGTH, WIDTH = 100.0, 22.0


def _grid(tilt_deg: float, flipped: set[int]) -> list[np.ndarray]:
    """Two rows of three cards in a photo turned by ``tilt_deg``, in row order; the cards in ``flipped`` have their
    quads given the other way round (as a card whose head cannot be told from its foot may be)."""
    t = np.radians(tilt_deg)
    a = np.array([np.sin(t), np.cos(t)])  # along the cards, down the photo
    r = np.array([np.cos(t), -np.sin(t)])  # across them, to the right
    quads = []
    for k in range(6):
        row, col = divmod(k, 3)
        c = np.array([400.0, 300.0]) + row * 1.3 * LENGTH * a + col * 1.6 * WIDTH * r
        u, v = a * LENGTH / 2, r * WIDTH / 2
        q = np.array([c - u - v, c - u + v, c + u + v, c + u - v], np.float32)
        quads.append(q[[2, 3, 0, 1]] if k in flipped else q)
    return quads


def test_rows_of_tilted_photo_reads_rows_top_to_bottom_left_to_right():
    rows, along, across = rows_of(_grid(15, set()))
    assert rows == [[0, 1, 2], [3, 4, 5]]
    assert np.isclose(np.linalg.norm(along), LENGTH, rtol=1e-3)
    assert np.isclose(np.linalg.norm(across), 1.0)


def test_rows_of_aligns_cards_lying_either_way_round():
    quads = _grid(-20, {1, 3, 5})
    assert rows_of(quads)[0] == [[0, 1, 2], [3, 4, 5]]
    # unaligned, three axes pointing up and three down leave no axis to band the rows by
    assert rows_of(quads, align=False)[0] != [[0, 1, 2], [3, 4, 5]]


def test_rows_of_turned_reads_the_photo_the_other_way_up():
    assert rows_of(_grid(10, {4}), turned=True)[0] == [[5, 4, 3], [2, 1, 0]]
