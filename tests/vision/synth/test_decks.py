"""Deck families that differ in structure (vision.synth.decks): every family draws all 35 faces, decks of one family
differ, families differ from each other in their heads, and a synth job renders scenes of any family."""

from __future__ import annotations

import json
import random
from dataclasses import replace

import numpy as np
import pytest

from scoring.cards import CODES
from vision.synth.decks import ALL_FAMILIES, DECK_FAMILIES, DeckSpec, deck_style, random_deck, render_deck_face
from vision.synth.faces import FACE_H, FACE_W, FaceSource


@pytest.mark.parametrize("family", DECK_FAMILIES)
def test_every_family_draws_every_face(family):
    spec = random_deck(random.Random(1), family)
    faces = [render_deck_face(c, spec, i) for i, c in enumerate(CODES)]
    assert all(f.shape == (FACE_H, FACE_W, 3) and a.shape == (FACE_H, FACE_W) for f, a in faces)
    heads = np.stack([f[: FACE_H // 5].astype(np.int16) for f, _ in faces])  # the top heads of the 35 cards
    assert len({h.tobytes() for h in heads}) == len(CODES)  # no two cards share a head


def test_decks_of_a_family_differ_and_families_differ_in_structure():
    rng = random.Random(2)
    specs = [random_deck(rng, "dotted") for _ in range(6)]
    assert len({(s.font, s.numeral, tuple(s.suit_chars.values()), s.field_kind) for s in specs}) > 1
    heads = {f: {random_deck(random.Random(k), f).head for k in range(20)} for f in DECK_FAMILIES}
    assert heads["boxed"] == {"boxed"} and heads["sideways"] == {"side"} and heads["woodblock"] == {"stacked"}
    assert "side" not in heads["assorted"]  # sideways stays the family no network is taught
    assorted = [random_deck(random.Random(k), "assorted") for k in range(30)]
    assert {s.ornament for s in assorted} > {"none"} and {s.band for s in assorted} > {"none"}
    assert {s.field_kind for s in assorted} >= {"figures", "pips"} and {s.string for s in assorted} >= {"rope", "beads"}
    assert all(s.ornament == "none" and s.band == "none" for s in specs)  # the other families are drawn as before
    with pytest.raises(ValueError, match="Unknown deck family"):
        random_deck(rng, "nowhere")


def test_face_source_and_synth_use_any_family(tmp_path):
    from vision.synth.write import Job, prepare, render_one

    spec = deck_style(random.Random(3), "boxed")
    assert isinstance(spec, DeckSpec) and set(ALL_FAMILIES) >= set(DECK_FAMILIES) | {"classic", "holdout"}
    face, _ = FaceSource(spec, seed=4).face("5b")
    assert np.array_equal(face, render_deck_face("5b", spec, 4 * 131 + CODES.index("5b"))[0])
    job = Job(str(tmp_path / "s"), "detect", 5, 2, ("sideways", "formal"), None, 0.0, 640, 480)
    prepare(job)
    for i in range(job.n):
        render_one(job, i)
    gts = [json.loads(p.read_text()) for p in sorted((tmp_path / "s" / "gt").glob("*.json"))]
    assert len(gts) == 2 and all(g["style"]["deck"] and g["style"]["family"] in ("sideways", "formal") for g in gts)
    assert any(len(g["cards"]) >= 10 for g in gts)  # (a detect job also renders some empty tables)


def test_a_deck_family_prints_its_own_card_proportions(tmp_path):
    """Real decks run from 4 : 1 to 5.5 : 1: a family deck's cards are laid at its aspect, and the labels follow."""
    from vision.synth.scene import SceneSpec, compose

    spec = random_deck(random.Random(7), "boxed")
    assert 4.0 <= spec.aspect <= 5.5
    img, gt = compose(SceneSpec(1280, 960, "row", ["1t", "2t", "3t", "4t", "5t"], [], [], 1 / 12), FaceSource(spec),
                      random.Random(1))
    ratios = [np.linalg.norm(np.subtract(c["quad"][3], c["quad"][0])) / np.linalg.norm(np.subtract(c["quad"][1], c["quad"][0]))
              for c in gt["cards"]]
    assert abs(float(np.median(ratios)) - spec.aspect) < 0.35  # the camera's tilt bends it a little



def test_heroes_decks_draw_a_figure_for_each_rank_of_wan_and_other_decks_stay_as_they_were():
    """The heroes family: every 万 rank its own figure (the same on every card of that rank, another in another deck),
    strings as short separate bars among the kinds; an assorted deck of a seed is drawn as before the family existed."""
    decks = [random_deck(random.Random(k), "heroes") for k in range(12)]
    assert {d.field_kind for d in decks} == {"heroes"} and "short" in {d.string for d in decks}
    assert {d.hero_dots for d in decks} == {True, False} and {d.hero_double for d in decks} == {True, False}
    spec = replace(decks[0], hero_dots=False)
    field = slice(FACE_H // 4, 3 * FACE_H // 4)
    wan = [render_deck_face(f"{n}w", spec, 0)[0][field] for n in range(1, 10)]
    assert len({w.tobytes() for w in wan}) == 9  # no dots: the figures alone tell the ranks apart
    assert np.array_equal(render_deck_face("3w", spec, 0)[0], render_deck_face("3w", spec, 0)[0])
    other = replace(spec, hero_seed=spec.hero_seed + 1)
    assert not np.array_equal(render_deck_face("3w", other, 0)[0][field], wan[2])
    short = replace(spec, string="short", field_kind="heroes")
    chain = replace(short, string="chain")
    assert not np.array_equal(render_deck_face("5t", short, 0)[0], render_deck_face("5t", chain, 0)[0])
    a = random_deck(random.Random(7), "assorted")
    assert (a.hero_seed, a.hero_dots, a.hero_double) == (0, False, True)  # the fields the heroes family alone draws


def test_medley_decks_draw_the_named_cards_the_printers_way_and_some_print_a_rim():
    """The medley family: its named cards are drawn one of many ways (one flower or three, a sprig, 千 once, in a seal
    or as a figure…), the same way on every named card of a deck and another way in another deck; most of its decks
    print a band round the card's edge; the heroes family, and every family before, keep their draws."""
    from vision.synth.names import FLOWER_WAYS, QZ_WAYS

    decks = [random_deck(random.Random(k), "medley") for k in range(40)]
    assert {d.names["flowers"] for d in decks} == set(FLOWER_WAYS) and {d.names["qz"] for d in decks} == set(QZ_WAYS)
    assert {d.rim > 0 for d in decks} == {True, False} and {d.field_kind for d in decks} >= {"heroes", "classic"}
    field = slice(FACE_H // 4, 3 * FACE_H // 4)
    base = replace(decks[0], rim=0)
    one = replace(base, names=base.names | {"flowers": "one", "marks": "none"})
    three = replace(one, names=one.names | {"flowers": "three"})
    assert not np.array_equal(render_deck_face("hh", one, 0)[0][field], render_deck_face("hh", three, 0)[0][field])
    renderers = replace(one, names={})  # no ways drawn: the renderer's own named cards
    assert not np.array_equal(render_deck_face("bh", one, 0)[0][field], render_deck_face("bh", renderers, 0)[0][field])
    for code in ("qz", "hh", "bh", "fu", "cai"):
        face, _ = render_deck_face(code, one, 0)
        assert face[field].std() > 10  # something is drawn in the field
    rimmed = replace(one, rim=6, rim_colour=(40, 40, 140))
    plain, _ = render_deck_face("5t", one, 0)
    edged, _ = render_deck_face("5t", rimmed, 0)
    mid = FACE_H // 2
    assert int(edged[mid, 3, 2]) > int(edged[mid, 3, 0]) + 40  # the band in its colour (BGR: red)
    assert edged[mid, 2:5].mean() < plain[mid, 2:5].mean() - 30 and np.array_equal(edged[mid, 20:70], plain[mid, 20:70])
    h = random_deck(random.Random(7), "heroes")
    assert h.names == {} and h.rim == 0
