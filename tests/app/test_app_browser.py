"""A real browser: the page served by `changpai app`, opened in headless Chromium at phone size, a sample
photo uploaded, the total found on the page, a screenshot saved."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.conftest import ROOT, SAMPLES, requires_model

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = [requires_model, pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed")]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture()
def server(tmp_path):
    port = _free_port()
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([sys.executable, "-m", "app.cli", "app", "--host", "127.0.0.1", "--port", str(port), "--db",
                             str(tmp_path / "tally.sqlite3")], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 60
    while time.time() < deadline:
        try:
            if urllib.request.urlopen(url + "/_stcore/health", timeout=2).read() == b"ok":
                break
        except OSError:
            time.sleep(0.5)
    else:
        proc.kill()
        pytest.fail("the app did not start: " + proc.stdout.read().decode(errors="replace")[-2000:])
    yield url
    proc.terminate()
    proc.wait(timeout=20)
    with pytest.raises(OSError):  # stopping `changpai app` stops the server (no Streamlit child left serving)
        urllib.request.urlopen(url + "/_stcore/health", timeout=2)


def test_phone_upload_shows_total(server, tmp_path):
    from playwright.sync_api import sync_playwright

    shot = Path(os.environ.get("CHANGPAI_SCREENSHOT") or tmp_path / "app_phone.png")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True,
                                    args=["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                                          "--disable-background-networking", "--disable-component-update", "--disable-sync"])
        page = browser.new_page(viewport={"width": 412, "height": 915}, device_scale_factor=2)
        page.goto(server, wait_until="domcontentloaded")
        page.wait_for_selector("input[type=file]", state="attached", timeout=60_000)
        page.set_input_files("input[type=file] >> nth=0", str(SAMPLES / "hand_1.jpg"))  # the hand; the last: the deck
        total = page.wait_for_selector("#total", timeout=90_000)
        text = total.inner_text()
        page.wait_for_timeout(1500)
        total.scroll_into_view_if_needed()
        page.mouse.wheel(0, -120)  # the caption above the total in view too
        page.wait_for_timeout(500)
        page.screenshot(path=str(shot))
        # the page brings its own CJK font: the total is drawn with it, whatever fonts the device has
        family = total.evaluate("e => getComputedStyle(e).fontFamily")
        loaded = page.evaluate("async () => { await document.fonts.ready; "
                               "return [...document.fonts].some(f => f.family.includes('changpai-cjk') && f.status === 'loaded'); }")
        browser.close()
    assert text.endswith("胡") and int(text.split()[0]) > 0
    assert shot.stat().st_size > 10_000
    assert "changpai-cjk" in family and loaded
    assert urllib.request.urlopen(server + "/app/static/changpai-cjk.otf", timeout=5).read(4) == b"OTTO"
