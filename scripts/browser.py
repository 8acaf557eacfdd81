"""Load a local HTML file in headless Chromium with the network off, through the DevTools
protocol over a pipe (`--remote-debugging-pipe`: no port, no extra package), and report what a
reader's browser would see: console errors and exceptions, any request that is not for the file
itself, the DOM after load, and a PNG screenshot of the whole page.

    python -m scripts.browser PAGE.html [--png OUT.png]   # prints the errors and requests, exit 1 on any

Chromium is Debian's `chromium` package (`make chromium`); `find_chromium()` finds it.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import fcntl
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome")
# Flags that run Chromium headless in a container, with nothing of its own going to the network.
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--disable-default-apps",
    "--mute-audio",
    "--hide-scrollbars",
    # Belt and braces: a request that slipped past the offline emulation resolves nowhere.
    "--host-resolver-rules=MAP * ~NOTFOUND",
    "--proxy-server=127.0.0.1:9",
    "--remote-debugging-pipe",
)
TIMEOUT_SECONDS = 60.0
WIDTH = 1200
HEIGHT = 900


@dataclass
class PageCheck:
    """What loading a page showed: `errors` (console errors, exceptions, log entries of level
    error), `requests` (URLs asked for other than file: and data: ones), `dom` (the document's
    HTML after load) and `png` (a screenshot of the whole page)."""

    errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)
    dom: str = ""
    png: bytes = b""


def find_chromium() -> str | None:
    """Chromium's path, or None when none of its usual names is on PATH."""
    for name in CHROMIUM_NAMES:
        found = shutil.which(name)
        if found:
            return found
    return None


class _Pipe:
    """The DevTools protocol over Chromium's pipe: JSON messages ended by a NUL byte."""

    def __init__(self, send_fd: int, receive_fd: int):
        self.send_fd = send_fd
        self.receive_fd = receive_fd
        self.buffer = b""
        self.next_id = 0
        self.events: list[dict[str, Any]] = []

    def _read(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("Chromium did not answer in time")
            ready, _, _ = select.select([self.receive_fd], [], [], left)
            if ready:
                chunk = os.read(self.receive_fd, 1 << 20)
                if not chunk:
                    raise RuntimeError("Chromium closed the DevTools pipe")
                self.buffer += chunk
        message, _, self.buffer = self.buffer.partition(b"\0")
        result: dict[str, Any] = json.loads(message)
        return result

    def call(self, method: str, params: dict[str, Any] | None = None, session: str | None = None) -> dict[str, Any]:
        self.next_id += 1
        message: dict[str, Any] = {"id": self.next_id, "method": method, "params": params or {}}
        if session is not None:
            message["sessionId"] = session
        os.write(self.send_fd, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + TIMEOUT_SECONDS
        while True:
            answer = self._read(deadline)
            if answer.get("id") == self.next_id:
                if "error" in answer:
                    raise RuntimeError(f"{method}: {answer['error']}")
                result: dict[str, Any] = answer.get("result", {})
                return result
            self.events.append(answer)

    def wait_for(self, method: str) -> None:
        deadline = time.monotonic() + TIMEOUT_SECONDS
        if any(event.get("method") == method for event in self.events):
            return
        while True:
            event = self._read(deadline)
            self.events.append(event)
            if event.get("method") == method:
                return


# Chromium reads the protocol from fd 3 and writes it to fd 4. A small Python step between places
# the pipe's ends there and execs Chromium, whatever numbers they have in this process.
_PLACE_PIPES = (
    "import os, sys; os.dup2(int(sys.argv[1]), 3); os.dup2(int(sys.argv[2]), 4); "
    "os.close(int(sys.argv[1])); os.close(int(sys.argv[2])); os.execv(sys.argv[3], sys.argv[3:])"
)


def _launch(chromium: str, profile: str) -> tuple[subprocess.Popen[bytes], _Pipe]:
    to_browser_read, to_browser_write = os.pipe()
    from_browser_read, from_browser_write = os.pipe()
    # Above 4, so that placing one end at 3 or 4 overwrites neither.
    child_read = fcntl.fcntl(to_browser_read, fcntl.F_DUPFD, 10)
    child_write = fcntl.fcntl(from_browser_write, fcntl.F_DUPFD, 10)
    for fd in (to_browser_read, from_browser_write):
        os.close(fd)
    command = [chromium, *FLAGS, f"--user-data-dir={profile}", f"--window-size={WIDTH},{HEIGHT}", "about:blank"]
    try:
        process = subprocess.Popen(
            [sys.executable, "-c", _PLACE_PIPES, str(child_read), str(child_write), *command],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            pass_fds=(child_read, child_write),
        )
    finally:
        os.close(child_read)
        os.close(child_write)
    return process, _Pipe(to_browser_write, from_browser_read)


def _record(events: list[dict[str, Any]], page_url: str, check: PageCheck) -> None:
    for event in events:
        method, params = event.get("method"), event.get("params", {})
        if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            args = " ".join(str(arg.get("value", arg.get("description", ""))) for arg in params.get("args", []))
            check.errors.append(f"console.{params['type']}: {args}")
        elif method == "Runtime.exceptionThrown":
            details = params.get("exceptionDetails", {})
            check.errors.append(
                f"exception: {details.get('text', '')} {details.get('exception', {}).get('description', '')}"
            )
        elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
            check.errors.append(f"log: {params['entry'].get('text', '')}")
        elif method == "Network.requestWillBeSent":
            url = params.get("request", {}).get("url", "")
            if url != page_url and not url.startswith("data:"):
                check.requests.append(url)


def check_page(page: Path, chromium: str | None = None) -> PageCheck:
    """Load `page` with the network off; see `PageCheck`."""
    chromium = chromium or find_chromium()
    if chromium is None:
        raise FileNotFoundError(f"no Chromium on PATH (looked for {', '.join(CHROMIUM_NAMES)})")
    url = page.resolve().as_uri()
    check = PageCheck()
    with tempfile.TemporaryDirectory(prefix="chromium-profile-") as profile:
        process, pipe = _launch(chromium, profile)
        try:
            target = pipe.call("Target.createTarget", {"url": "about:blank"})["targetId"]
            session = pipe.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
            for method in ("Page.enable", "Runtime.enable", "Log.enable", "Network.enable"):
                pipe.call(method, session=session)
            pipe.call(
                "Network.emulateNetworkConditions",
                {"offline": True, "latency": 0, "downloadThroughput": 0, "uploadThroughput": 0},
                session=session,
            )
            pipe.call(
                "Emulation.setDeviceMetricsOverride",
                {"width": WIDTH, "height": HEIGHT, "deviceScaleFactor": 1, "mobile": False},
                session=session,
            )
            pipe.events.clear()
            pipe.call("Page.navigate", {"url": url}, session=session)
            pipe.wait_for("Page.loadEventFired")
            dom = pipe.call(
                "Runtime.evaluate",
                {"expression": "document.documentElement.outerHTML", "returnByValue": True},
                session=session,
            )
            check.dom = dom["result"]["value"]
            size = pipe.call("Page.getLayoutMetrics", session=session)["cssContentSize"]
            shot = pipe.call(
                "Page.captureScreenshot",
                {
                    "format": "png",
                    "captureBeyondViewport": True,
                    "clip": {"x": 0, "y": 0, "width": WIDTH, "height": size["height"], "scale": 1},
                },
                session=session,
            )
            check.png = base64.b64decode(shot["data"])
            _record(pipe.events, url, check)
            with contextlib.suppress(RuntimeError):
                pipe.call("Browser.close")
        finally:
            os.close(pipe.send_fd)
            os.close(pipe.receive_fd)
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
    return check


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m scripts.browser", description=__doc__)
    parser.add_argument("page", type=Path)
    parser.add_argument("--png", type=Path, help="write the screenshot here")
    args = parser.parse_args(argv)
    check = check_page(args.page)
    for error in check.errors:
        print(f"error: {error}")
    for request in check.requests:
        print(f"request: {request}")
    if args.png:
        args.png.write_bytes(check.png)
    print(f"{len(check.dom)} characters of DOM, a {len(check.png)}-byte screenshot")
    return 1 if check.errors or check.requests else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
