"""The page's "calibrate my deck": a photo of the deck's faces → the named faces to confirm → the fast fit, kept for
the table in the tally database, so that the table's later photos are read with its own deck's model."""

from __future__ import annotations

import hashlib
import os
import shutil
import time
import uuid
from pathlib import Path

import streamlit as st

from app.i18n import say, t
from app.tally import Tally
from scoring.cards import EXTRAS
from vision.deck.calibrate import check_sheet, faces_from_photo, fast_fit
from vision.deck.name import CalibrationError
from vision.infer.imageio import ImageError, read_photo
from vision.infer.model import ModelError, model_info


def table_model(store: Tally | None, table: str, default: str | None) -> str | None:
    """The model the table's photos are read with: its calibrated deck's, else ``default``."""
    if store is None:
        return default
    try:
        return store.deck(table) or default
    except ValueError:
        return default


def deck_section(lang: str, store: Tally | None, table: str, base: str | None, device: str) -> None:
    """The expander: what the table reads with now, and the calibration flow."""
    if store is None:
        return
    with st.expander(t("deck", lang), expanded=bool(st.session_state.get("deck_done"))):
        done = st.session_state.pop("deck_done", None)
        if done is not None:
            st.success(t("deck_done", lang))
            if done:
                st.caption(t("deck_check", lang, n=done["scenes"], recall=f"{done['recall'] * 100:.1f}",
                             codes=f"{done['codes_right'] * 100:.1f}"))
        own = store.deck(table)
        st.caption(t("deck_own" if own else "deck_base", lang))
        if own and st.button(t("deck_forget", lang), key="deck_forget"):
            store.set_deck(table, None, device)
            st.rerun()
        st.caption(t("deck_help", lang))
        up = st.file_uploader(t("deck_upload", lang), type=["jpg", "jpeg", "heic", "heif", "png", "webp"], key="deck_upload")
        if up is None:
            return
        data = up.getvalue()
        key = hashlib.sha1(data).hexdigest()[:16]
        if st.session_state.get("deck_key") != key:
            st.session_state.deck_key = key
            st.session_state.deck_named = _named(data, lang)
        named = st.session_state.deck_named
        if isinstance(named, str):  # a sentence (and the marked photo, shown with it)
            st.error(named)
            if st.session_state.get("deck_picture") is not None:
                st.image(st.session_state.deck_picture[..., ::-1], caption=t("deck_marked", lang))
            return
        faces, notes = named
        st.image(check_sheet(faces)[..., ::-1], caption=t("deck_confirm", lang))
        for n in notes:
            st.warning(say(n, lang))
        # the photo shows no extras: the deck may have them all the same (read as the released model reads them)
        no_extras = not any(code in EXTRAS for code, _ in faces) and st.checkbox(t("deck_lacks_extras", lang),
                                                                                   key="deck_no_extras")
        if st.button(t("deck_fit", lang), key="deck_fit", type="primary"):
            folder = store.deck_folder(table)
            lock = _fit_lock(folder)
            if lock is None:  # another phone at this table is fitting the deck now
                st.info(t("deck_busy", lang))
                return
            tmp = folder.with_name(f"{folder.name}.new-{uuid.uuid4().hex[:8]}")  # this fit's own, whatever else runs
            try:
                try:
                    with st.spinner(t("deck_fitting", lang)):
                        cal = fast_fit(faces, tmp, model_info(base), progress=False, no_extras=no_extras)
                    model_info(tmp)  # it loads before the table uses it
                except (ModelError, OSError, ValueError) as e:
                    shutil.rmtree(tmp, ignore_errors=True)
                    st.error(say(e, lang))
                    return
                old = folder.with_name(f"{folder.name}.old-{uuid.uuid4().hex[:8]}")
                if folder.exists():
                    folder.rename(old)  # the table's model is never half written: moved aside, then replaced
                tmp.rename(folder)
                shutil.rmtree(old, ignore_errors=True)
            finally:
                lock.unlink(missing_ok=True)  # however the fit ended
            store.set_deck(table, folder, device)
            st.session_state.deck_done = cal.get("deck_check", {})  # said after the page is drawn again with the deck's model
            st.rerun()


FIT_LOCK_STALE_S = 600  # a fit takes about a minute: a lock this old is a page that stopped mid-fit


def _fit_lock(folder: Path) -> Path | None:
    """Take the table's fitting lock (a file beside its deck folder), or None while another phone holds it: two
    phones fitting one table's deck at once would otherwise both write, and the later silently win."""
    lock = folder.with_name(folder.name + ".fitting")
    lock.parent.mkdir(parents=True, exist_ok=True)
    for _ in range(2):
        try:
            os.close(os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            return lock
        except FileExistsError:
            try:
                if time.time() - lock.stat().st_mtime < FIT_LOCK_STALE_S:
                    return None
                lock.unlink()  # stale: taken again on the second try
            except FileNotFoundError:
                pass  # let go meanwhile: taken on the second try
    return None


def _named(data: bytes, lang: str):
    """The faces of the calibration photo and the notes on them, or the sentence saying why they cannot be named
    (the marked photo kept in the session to show with it)."""
    st.session_state.deck_picture = None
    try:
        img, _ = read_photo(data, name="the photo")
        faces, _, notes = faces_from_photo(img)
    except ImageError as e:
        return say(e, lang)
    except CalibrationError as e:
        st.session_state.deck_picture = e.picture
        return " ".join(say(m, lang) for m in e.said)
    return faces, notes
