"""`changpai eval DIR --sheet PNG` (vision.eval.sheet): the wrong cards of a report drawn as one picture, each cut
upright at its box (misread) or its true corners (missed)."""

from __future__ import annotations

import cv2
import numpy as np

from app.cli import main
from vision.eval.sheet import LABEL_H, PER_ROW, TILE_H, TILE_W, write_sheet, wrong_cards
from vision.eval.tally import CardTally
from vision.types import Card


def _quad(x: int) -> list[list[int]]:
    return [[x, 10], [x + 30, 10], [x + 30, 130], [x, 130]]


def _report(tmp_path, colours):
    """A photo of bars of the given colours (BGR) side by side, each a card; the second read wrong, the third missed."""
    img = np.full((150, 50 * len(colours) + 20, 3), 90, np.uint8)
    for k, c in enumerate(colours):
        cv2.fillConvexPoly(img, np.int32(_quad(50 * k)), c)
    cv2.imwrite(str(tmp_path / "a.jpg"), img)
    gt = {"image": "a.jpg", "cards": [{"code": code, "quad": _quad(50 * k), "visible": 1.0}
                                      for k, code in enumerate(["1t", "2t", "3t"])]}
    cards = [Card("1t", 0.9, [("1t", 0.9)], _quad(0)), Card("5t", 0.6, [("5t", 0.6)], _quad(50))]
    tally = CardTally()
    tally.add(gt, cards)
    return tally.report()


def test_the_sheet_shows_each_wrong_card_where_it_lies(tmp_path):
    red, blue = (0, 0, 255), (255, 0, 0)
    report = _report(tmp_path, [(255, 255, 255), red, blue])
    wrong = wrong_cards(report)
    assert [(w["true"], w["read"]) for w in wrong] == [("2t", "5t"), ("3t", None)]
    out = tmp_path / "s" / "sheet.png"
    assert write_sheet(report, tmp_path, out) == 2
    sheet = cv2.imread(str(out))
    assert sheet.shape[:2] == (LABEL_H + TILE_H + 4, 2 * TILE_W)
    body = sheet[LABEL_H + 20: LABEL_H + TILE_H - 20]
    # the misread card's tile is the red bar, the missed card's the blue one: cut where each lies, not elsewhere
    assert np.abs(body[:, 8:TILE_W - 8].mean((0, 1)) - red).max() < 40
    assert np.abs(body[:, TILE_W + 8:2 * TILE_W - 8].mean((0, 1)) - blue).max() < 40


def test_many_wrong_cards_are_laid_in_rows_and_none_is_an_empty_picture(tmp_path):
    report = _report(tmp_path, [(255, 255, 255), (0, 0, 255), (255, 0, 0)])
    row = report["per_image"][0]
    report["per_image"] = [row] * (PER_ROW // 2 + 1)  # 2 wrong cards a photo: more than a row
    assert write_sheet(report, tmp_path, tmp_path / "many.png") == PER_ROW + 2
    assert cv2.imread(str(tmp_path / "many.png")).shape[:2] == (2 * (LABEL_H + TILE_H + 4), PER_ROW * TILE_W)
    assert write_sheet({"per_image": []}, tmp_path, tmp_path / "none.png") == 0
    assert cv2.imread(str(tmp_path / "none.png")) is not None


def test_a_sheet_that_is_not_a_png_is_one_sentence(tmp_path, capsys):
    assert main(["eval", str(tmp_path), "--sheet", str(tmp_path / "s.jpg")]) == 2
    err = capsys.readouterr().err
    assert ".png" in err and "Traceback" not in err
    assert main(["eval", str(tmp_path), "--hands", "--sheet", str(tmp_path / "s.png")]) == 2  # not for totals
    assert "--sheet is for the recognizer's figures" in capsys.readouterr().err
