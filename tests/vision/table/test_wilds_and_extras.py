"""Wild cards (rugao) and 喜儿 extras read from a photo."""

import pytest

from app.i18n import say
from tests.vision.table.photo_helpers import XI_ER, H, W, _card, _single_hand
from vision.table.context import PhotoContext, PhotoError
from vision.table.pipeline import score_recognition
from vision.types import Card, Recognition


def test_a_wild_card_in_the_hand_scores_in_rugao_and_is_refused_in_one_sentence_elsewhere():
    """R8: in rugao 福禄寿禧财 are wild; a photo with 福 in the hand is a legal win there, scored as the reading worth
    most (here 福 makes qz×3), and the same photo in nantong-double says in one sentence that 福 is not in its deck."""
    hand = "1t 1t fu 3w 4w 5w 5b 5b 5b 5b 8w 8w 8w qz qz 9b 9b 9b".split()
    cards = [_card(c, 100 + k * 1.1 * W, 100) for k, c in enumerate(hand)]
    cards += [_card("1b", 100 + k * 1.1 * W, 100 + 2 * H) for k in range(3)]
    cards += [_card("2t", 100 + 6 * W + k * 1.1 * W, 100 + 2 * H) for k in range(4)]
    cards += [_card("7t", 100, 100 + 4 * H), _card("6w", 100 + 1.1 * W, 100 + 4 * H)]
    rec = Recognition(2400, 1200, cards)
    ps = score_recognition(rec, PhotoContext(ruleset="rugao", win="8w", self_drawn=True))
    assert ps.result.is_win and "fu" in ps.hand["concealed"] and not ps.repair.changes
    plain = score_recognition(Recognition(2400, 1200, [_card("1t" if c.code == "fu" else c.code, *c.quad[0]) for c in cards]),
                              PhotoContext(ruleset="rugao", win="8w", self_drawn=True))
    assert ps.result.total >= plain.result.total  # the wild is read the way worth most
    with pytest.raises(PhotoError) as e:
        score_recognition(rec, PhotoContext(ruleset="nantong-double", win="8w", self_drawn=True), repair_on=False)
    assert "fu is not in the nantong-double deck" in str(e.value) and "\n" not in str(e.value)


def test_a_second_card_read_as_a_wild_the_hand_holds_is_counted_as_one_it_lacks_in_rugao():
    """R8: the wild cards are alike, one of each in the deck. Two cards read 福 (one a misread 喜) made the hand
    'too many fu' and no total; the second is counted as a wild the hand lacks, its likeliest such reading first,
    with a note, and the total is the one of the true cards."""
    hand = "1t 1t fu 3w 4w 5w 5b 5b 5b 5b 8w 8w 8w qz qz 9b 9b".split()
    cards = [_card(c, 100 + k * 1.1 * W, 100) for k, c in enumerate(hand)]
    cards.append(Card("fu", 0.8, [("fu", 0.8), ("xi", 0.15), ("3t", 0.05)], _card("fu", 100 + 17 * 1.1 * W, 100).quad, 0.9))
    cards += [_card("1b", 100 + k * 1.1 * W, 100 + 2 * H) for k in range(3)]
    cards += [_card("2t", 100 + 6 * W + k * 1.1 * W, 100 + 2 * H) for k in range(4)]
    cards += [_card("7t", 100, 100 + 4 * H), _card("6w", 100 + 1.1 * W, 100 + 4 * H)]
    ctx = PhotoContext(ruleset="rugao", win="8w", self_drawn=True)
    ps = score_recognition(Recognition(2400, 1200, cards), ctx, repair_on=False)
    said = [w for w in ps.warnings if w.key == "wild_alike"]
    assert len(said) == 1 and said[0].values["old"] == "fu" and said[0].values["new"] == "xi"
    true = [c if k != 17 else _card("xi", *c.quad[0]) for k, c in enumerate(cards)]
    assert ps.result.is_win and ps.result.total == score_recognition(Recognition(2400, 1200, true), ctx).result.total
    assert sorted(c for c in ps.hand["concealed"] if c in ("fu", "xi")) == ["fu", "xi"]


def test_a_second_card_read_as_an_extra_the_hand_holds_is_counted_as_one_it_lacks_with_xi_er():
    """R7's 喜儿 option (nantong-single): the extras are bonus cards counted by how many are held, one of each in the
    deck, so which one a card is changes no total. Two cards read 福 (one a misread 喜) are counted as 福 and 喜, with
    a note, and the total is the one of the true cards; without the option an extra in the hand is refused."""
    cards = _single_hand(["fu"], Card("fu", 0.8, [("fu", 0.8), ("xi", 0.15), ("3t", 0.05)], [], 0.9), "hh")
    ps = score_recognition(Recognition(3000, 1200, cards), XI_ER, repair_on=False)
    said = [w for w in ps.warnings if w.key == "xier_alike"]
    assert len(said) == 1 and said[0].values["old"] == "fu" and said[0].values["new"] == "xi" and "(R7)" in said[0]
    true = _single_hand(["fu"], _card("xi", 0, 0), "hh")
    assert ps.result.is_win and ps.result.total == score_recognition(Recognition(3000, 1200, true), XI_ER).result.total
    assert [i.points for i in ps.result.items if i.key == "xi_er"] == [30]  # two 喜儿 held
    with pytest.raises(PhotoError):
        score_recognition(Recognition(3000, 1200, true), PhotoContext(ruleset="nantong-single", win="2b", self_drawn=True),
                          repair_on=False)


def test_a_card_read_as_the_extra_flipped_as_jiang_is_counted_as_another_with_xi_er():
    """The flipped 将 is the deck's one 福 (R7: a 喜儿 flip doubles the 喜儿 points): a card of the hand read 福 as well
    is another extra misread, counted as one neither holds, with a note; before, 'too many fu' and no total."""
    cards = _single_hand([], Card("fu", 0.7, [("fu", 0.7), ("shou", 0.2), ("3t", 0.1)], [], 0.9), "fu")
    ps = score_recognition(Recognition(3000, 1200, cards), XI_ER, repair_on=False)
    said = [w for w in ps.warnings if w.key == "xier_alike"]
    assert len(said) == 1 and said[0].values["new"] == "shou" and "fu flipped as 将: 1" in said[0]
    assert ps.hand["jiang"] == ["fu"] and "shou" in ps.hand["concealed"]
    assert [i.points for i in ps.result.items if i.key == "xi_er"] == [20]  # one 喜儿 held, doubled by the 喜儿 flip


def test_a_card_read_as_an_extra_is_read_as_its_likeliest_face_of_a_deck_without_extras():
    """nantong-double's deck has no 福禄寿禧财: a 一条 misread as 寿 (寿 0.5, 一条 0.4) made the whole hand 'not in the
    deck' and no total. It is read as its likeliest face of that deck, probabilities conditioned on the deck, with a
    note naming the card; where extras are wild (rugao) the reading stays."""
    cards = _shou_third([("shou", 0.5), ("1t", 0.4), ("fu", 0.05), ("3t", 0.05)])
    rec = Recognition(2400, 1200, cards)
    for repair_on in (False, True):
        ps = score_recognition(rec, PhotoContext(ruleset="nantong-double", win="8w", self_drawn=True), repair_on=repair_on)
        said = [w for w in ps.warnings if w.key == "deck_no_extras"]
        assert ps.result.is_win and "shou" not in ps.hand["concealed"] and not ps.repair.changes
        assert len(said) == 1 and said[0].values["i"] == 3 and said[0].values["new"] == "1t" and said[0].values["p_new"] == "0.89"
    true = Recognition(2400, 1200, [_card("1t", *c.quad[0]) if k == 2 else c for k, c in enumerate(cards)])
    assert ps.result.total == score_recognition(true, PhotoContext(ruleset="nantong-double", win="8w", self_drawn=True)).result.total
    wild = score_recognition(rec, PhotoContext(ruleset="rugao", win="8w", self_drawn=True))
    assert not [w for w in wild.warnings if w.key == "deck_no_extras"] and "shou" in wild.hand["concealed"]


def test_a_spare_read_as_an_extra_is_read_by_the_deck_too():
    """A box the detector left out (a spare, which a repair may add) read as 寿 in nantong-double is read as its
    likeliest face of that deck, as the kept cards are, though no kept card was an extra."""
    from scoring.rulesets import get_ruleset
    from vision.table.pipeline import deck_readings

    spare = Card("shou", 0.6, [("shou", 0.6), ("1t", 0.3)], _card("1t", 0, 0).quad, 0.2)
    rec = Recognition(2400, 1200, [_card("2t", 0, 0)], spares=[spare])
    out, said = deck_readings(rec, get_ruleset("nantong-double"))
    assert not said and out.cards == rec.cards and out.spares[0].code == "1t" and out.spares[0].confidence == 0.75
    assert deck_readings(rec, get_ruleset("rugao")) == (rec, [])


def test_a_card_counted_as_a_face_of_a_deck_without_extras_is_read_within_that_face_s_four_copies():
    """A 一条 misread as 寿 whose likeliest other face is 五丙 made a fifth 五丙 in nantong-double's deck (the hand
    holds four) and the hand was refused. The cards are read together within the deck's copies: it is counted as its
    next face, 一条, with a check: naming it, and the total is the true cards'."""
    cards = _shou_third([("shou", 0.5), ("5b", 0.3), ("1t", 0.15), ("fu", 0.05)])
    ctx = PhotoContext(ruleset="nantong-double", win="8w", self_drawn=True)
    true = score_recognition(Recognition(2400, 1200, [_card("1t", *c.quad[0]) if k == 2 else c for k, c in enumerate(cards)]), ctx)
    for repair_on in (False, True):
        ps = score_recognition(Recognition(2400, 1200, cards), ctx, repair_on=repair_on)
        said = [w for w in ps.warnings if w.key.startswith("deck_")]  # one line says both reasons
        assert [w.key for w in said] == ["deck_no_extras_copies"] and said[0].startswith("check:")
        assert (said[0].values["old"], said[0].values["face"], said[0].values["new"], said[0].values["i"]) == ("shou", "5b", "1t", 3)
        assert ps.hand["concealed"].count("5b") == 4
        assert ps.result.is_win and ps.result.total == true.result.total and not ps.repair.changes
    assert say(said[0], "zh").startswith("请核对：第 3 张认作寿") and "另有 4 张认作五丙" in say(said[0], "zh")


def test_a_fifth_copy_read_as_a_face_is_counted_as_its_next_face_with_a_check():
    """The recognizer reads a photo within the deck's copies from every reading it has; cards given without them (a
    recognition kept in a file, a spare's reading) can still hold a fifth: it is read within the copies by photo → hu
    too, the least sure such card as its next face, and named."""
    cards = _shou_third([("5b", 0.55), ("1t", 0.4), ("3t", 0.05)])
    ctx = PhotoContext(ruleset="nantong-double", win="8w", self_drawn=True)
    ps = score_recognition(Recognition(2400, 1200, cards), ctx, repair_on=False)
    said = [w for w in ps.warnings if w.key.startswith("deck_")]
    assert [w.key for w in said] == ["deck_copies"] and said[0].values["new"] == "1t" and said[0].values["old"] == "5b"
    assert ps.result.is_win and ps.hand["concealed"].count("5b") == 4


def _shou_third(readings: list[tuple[str, float]]) -> list[Card]:
    """A nantong-double win on 8w (1t×3, 3w4w5w, 5b×4, 8w×3, qz qz, 9b×3, 1b×3 and 2t×4 laid below, 7t 6w apart) whose
    third card, a 一条, is read with ``readings``."""
    hand = "1t 1t 1t 3w 4w 5w 5b 5b 5b 5b 8w 8w 8w qz qz 9b 9b 9b".split()
    cards = [_card(c, 100 + k * 1.1 * W, 100) for k, c in enumerate(hand)]
    cards[2] = Card(readings[0][0], readings[0][1], readings, cards[2].quad, 0.9)
    cards += [_card("1b", 100 + k * 1.1 * W, 100 + 2 * H) for k in range(3)]
    cards += [_card("2t", 100 + 6 * W + k * 1.1 * W, 100 + 2 * H) for k in range(4)]
    return cards + [_card("7t", 100, 100 + 4 * H), _card("6w", 100 + 1.1 * W, 100 + 4 * H)]

