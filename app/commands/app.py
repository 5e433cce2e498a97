"""`changpai app`: serve the table page to phones on the same network."""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
from pathlib import Path

from vision import DEFAULT_MODEL_NAME

from ..cli import UserError


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        port = 0
    if not 1 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"a port is a whole number from 1 to 65535, not {text[:12]!r}")
    return port


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--host", default="0.0.0.0", help="address to listen on (0.0.0.0: every phone on the network)")
    p.add_argument("--port", type=_port, default=8501, help="port to serve on, 1–65535 (default 8501)")
    p.add_argument("--db", help="tally database file (default ~/.changpai/tally.sqlite3)")
    p.add_argument("--model", help=f"model folder (default models/{DEFAULT_MODEL_NAME})")
    p.add_argument("--cert", help="TLS certificate (PEM) for HTTPS: phone browsers allow the camera only over HTTPS")
    p.add_argument("--key", help="TLS private key (PEM)")
    p.add_argument("--max-upload-mb", type=int, default=25, help="largest photo the page takes, in MB (default 25)")


def command(args: argparse.Namespace) -> list[str]:
    page = Path(__file__).resolve().parents[1] / "streamlit_app.py"
    cmd = [sys.executable, "-m", "streamlit", "run", str(page), "--server.address", args.host, "--server.port", str(args.port),
           "--server.headless", "true", "--browser.gatherUsageStats", "false", "--server.maxUploadSize", str(args.max_upload_mb)]
    if args.cert or args.key:
        if not (args.cert and args.key):
            raise UserError("HTTPS needs both --cert and --key.")
        for f in (args.cert, args.key):
            if not Path(f).is_file():
                raise UserError(f"No file at {f}.")
        cmd += ["--server.sslCertFile", args.cert, "--server.sslKeyFile", args.key]
    return cmd


def phone_addresses(host: str) -> list[str]:
    """The addresses a phone on the same network opens: this computer's own (looked up, no packet sent) when the page
    listens on every interface, else the one it was told to listen on."""
    if host not in ("0.0.0.0", "::", ""):
        return [host]
    try:
        found = {ai[4][0] for ai in socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET)}
    except OSError:
        found = set()
    lan = sorted(a for a in found if not a.startswith("127."))
    return lan or ["localhost"]


def exposure(host: str, port: int, scheme: str, addresses: list[str]) -> str:
    """What the start-up says: who can reach the page, what a table code protects, the address phones open."""
    everyone = host in ("0.0.0.0", "::", "")
    reach = ("every device on this computer's networks (the table's Wi-Fi, and any other network it is on)" if everyone
             else f"devices that can reach {host}")
    return "\n".join([
        f"changpai: serving the table page on {', '.join(f'{scheme}://{a}:{port}' for a in addresses)} (Ctrl-C to stop)",
        f"changpai: who can open it: {reach}. Anyone who opens it can score photos; a table's tally (add, undo, rename) "
        "is reached only with its table code, so keep the code within the table and serve on a network you trust "
        "(--host 127.0.0.1 keeps the page to this computer). Every change is logged with the phone that made it.",
    ] + ([] if scheme == "https" else ["changpai: phone browsers open the camera only over HTTPS (--cert/--key); "
                                       "uploading a photo works without it."]))


def run(args: argparse.Namespace) -> int:
    cmd = command(args)
    env = dict(os.environ)
    if args.db:
        env["CHANGPAI_DB"] = str(Path(args.db).resolve())
    if args.model:
        env["CHANGPAI_MODEL"] = str(Path(args.model).resolve())
    env["CHANGPAI_MAX_UPLOAD_MB"] = str(args.max_upload_mb)
    env.setdefault("PYTHONPATH", str(Path(__file__).resolve().parents[2]))
    scheme = "https" if args.cert else "http"
    addresses = phone_addresses(args.host)
    url = f"{scheme}://{addresses[0]}:{args.port}"
    env["CHANGPAI_URL"] = url  # the page shows it as a QR code, with the table's code
    print(exposure(args.host, args.port, scheme, addresses), flush=True)
    # from the project's folder: Streamlit reads its config (.streamlit/config.toml: the page's CJK font) from there
    root = Path(__file__).resolve().parents[2]
    if os.name == "posix":  # the server becomes this process: stopping it (Ctrl-C, SIGTERM) stops the page, no orphan left
        os.chdir(root)
        os.execve(cmd[0], cmd, env)
    return subprocess.call(cmd, env=env, cwd=root)
