"""Browser tests of the board page (docs/web.md): a real `engine serve`
on a free loopback port, driven by Playwright with the system Chromium.
Run through scripts/web_tests.sh, which sets ENGINE_BIN and the venv."""

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[2]
ENGINE = Path(os.environ.get("ENGINE_BIN", ROOT / "target/release/engine"))
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
NET = "models/engine-9x9-13x13-b4c32-grow304.bin.gz"
# A human SL net (random weights, made by KataGo's trainer; docs/gtp.md).
HUMAN_NET = "models/test-human-sl/b2c16-fson-mish-meta.bin.gz"
# Where screenshots go when asked for (WEB_SCREENSHOTS=docs).
SHOTS = os.environ.get("WEB_SCREENSHOTS")


class Server:
    """A running `engine serve`; `stop()` always ends it."""

    def __init__(self, *args):
        self.proc = subprocess.Popen(
            [str(ENGINE), "serve", "-listen", "127.0.0.1:0", *args],
            cwd=ROOT,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        self.log = []
        self.url = None
        ready = threading.Event()

        def read():
            for line in self.proc.stderr:
                self.log.append(line.rstrip())
                prefix = "engine serve: listening on http://"
                if line.startswith(prefix):
                    self.url = "http://" + line[len(prefix):].split(",")[0]
                    ready.set()
            ready.set()

        threading.Thread(target=read, daemon=True).start()
        if not ready.wait(120) or not self.url:
            self.stop()
            raise RuntimeError("engine serve did not start:\n" + "\n".join(self.log))

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


@pytest.fixture(scope="session")
def stub_server():
    s = Server("-stub-search", "-override-config", "numAnalysisThreads=2")
    yield s
    s.stop()


@pytest.fixture(scope="session")
def net_server():
    # Reviews at low visits (test_review_marks_mistakes_on_the_real_net).
    s = Server("-model", NET, "-config", "configs/serve.toml", "-override-config",
               "numAnalysisThreads=2,reviewFastVisits=8,reviewDeepVisits=16")
    yield s
    s.stop()


@pytest.fixture(scope="session")
def browser():
    with sync_playwright() as p:
        args = ["--no-sandbox"] if os.geteuid() == 0 else []
        b = p.chromium.launch(executable_path=CHROMIUM, args=args)
        yield b
        b.close()


class Console:
    """The console errors and uncaught exceptions of a page."""

    def __init__(self, page):
        self.errors = []
        page.on("console", lambda m: m.type == "error" and self.errors.append(m.text))
        page.on("pageerror", lambda e: self.errors.append(str(e)))


@pytest.fixture
def context(browser):
    ctx = browser.new_context(viewport={"width": 1280, "height": 800}, accept_downloads=True)
    yield ctx
    ctx.close()


@pytest.fixture
def page(context):
    p = context.new_page()
    p.set_default_timeout(30_000)
    p.console = Console(p)
    yield p
    # No test may leave a console error behind.
    assert p.console.errors == [], p.console.errors
