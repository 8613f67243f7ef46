"""A minimal Chrome DevTools Protocol client over --remote-debugging-pipe (no websocket,
no chromedriver): load a page in headless Chromium, collect console errors, run
JavaScript, take a full-page screenshot; check_in_browser, the layout checks every
page test applies (the job page, the site page)."""

from __future__ import annotations

import base64
import fcntl
import json
import os
import select
import shutil
import subprocess
import time

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def _high(fd: int) -> int:
    """Move a pipe end above fd 10, so placing the child's ends at 3 and 4 cannot
    overwrite one with the other or keep its close-on-exec flag (dup2 onto itself)."""
    new = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
    os.close(fd)
    return new


class Browser:
    """Headless Chromium driven through fds 3 (commands in) and 4 (replies out)."""

    def __init__(self, profile_dir, width=1200, height=900, timeout=120.0):
        self.timeout = timeout
        cmd_r, self._cmd_w = map(_high, os.pipe())
        self._out_r, out_w = map(_high, os.pipe())
        # the child must see the pipes as fds 3 and 4: placed there after the fork, and
        # kept open (close_fds would close them again); our ends are close-on-exec
        def child_fds():
            os.dup2(cmd_r, 3)  # inheritable copies (the originals are close-on-exec)
            os.dup2(out_w, 4)

        self.proc = subprocess.Popen(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
             "--no-first-run", "--disable-background-networking", "--disable-component-update",
             "--disable-sync", "--hide-scrollbars", "--remote-debugging-pipe",
             f"--user-data-dir={profile_dir}", f"--window-size={width},{height}"],
            preexec_fn=child_fds, close_fds=False, stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        os.close(cmd_r)
        os.close(out_w)
        self._buf, self._next, self.events, self.session = b"", 0, [], None
        self.width, self.height = width, height

    def _read_message(self, deadline):
        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._out_r], [], [], left)[0]:
                raise TimeoutError("chromium did not answer")
            chunk = os.read(self._out_r, 1 << 20)
            if not chunk:
                raise EOFError("chromium closed the pipe: " + self.proc.stderr.read(4000).decode())
            self._buf += chunk
        msg, self._buf = self._buf.split(b"\0", 1)
        return json.loads(msg)

    def send(self, method, session=True, **params):
        self._next += 1
        msg = {"id": self._next, "method": method, "params": params}
        if session and self.session:
            msg["sessionId"] = self.session
        data = json.dumps(msg).encode() + b"\0"
        while data:
            data = data[os.write(self._cmd_w, data):]
        deadline = time.monotonic() + self.timeout
        while True:
            m = self._read_message(deadline)
            if m.get("id") == self._next:
                if "error" in m:
                    raise RuntimeError(f"{method}: {m['error']}")
                return m.get("result", {})
            self.events.append(m)

    def wait_event(self, method):
        deadline = time.monotonic() + self.timeout
        while not any(e.get("method") == method for e in self.events):
            self.events.append(self._read_message(deadline))

    def open(self, url):
        target = self.send("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.send("Target.attachToTarget", targetId=target,
                                 flatten=True)["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            self.send(f"{domain}.enable")
        self.send("Emulation.setDeviceMetricsOverride", width=self.width, height=self.height,
                  deviceScaleFactor=1, mobile=False)
        self.send("Page.navigate", url=url)
        self.wait_event("Page.loadEventFired")

    def evaluate(self, expression):
        r = self.send("Runtime.evaluate", expression=expression, returnByValue=True,
                      awaitPromise=True)
        if "exceptionDetails" in r:
            raise RuntimeError(f"script failed: {r['exceptionDetails']}")
        return r["result"].get("value")

    def errors(self) -> list:
        """Console errors, uncaught exceptions and browser log errors (failed loads...)."""
        out = []
        for e in self.events:
            m, p = e.get("method"), e.get("params", {})
            if m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                out.append(f"console.{p['type']}: {p.get('args')}")
            elif m == "Runtime.exceptionThrown":
                out.append(f"exception: {p.get('exceptionDetails', {}).get('text')}")
            elif m == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
                out.append(f"log: {p['entry'].get('text')} {p['entry'].get('url', '')}")
        return out

    def screenshot(self) -> bytes:
        """The whole page (not only the viewport) as PNG."""
        size = self.send("Page.getLayoutMetrics")["cssContentSize"]
        r = self.send("Page.captureScreenshot", format="png", captureBeyondViewport=True,
                      clip={"x": 0, "y": 0, "width": size["width"], "height": size["height"],
                            "scale": 1})
        return base64.b64decode(r["data"])

    def close(self):
        try:
            self.send("Browser.close", session=False)
        except (OSError, EOFError, TimeoutError, RuntimeError):
            pass
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._cmd_w)
        os.close(self._out_r)
        self.proc.stderr.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


# Run in the page: every image loaded, and the boxes of the page's blocks (figures,
# tables, headings, paragraphs, advice) pairwise disjoint unless one holds the other.
LAYOUT_JS = """(() => {
  const box = e => { const r = e.getBoundingClientRect();
    return {x: r.left + scrollX, y: r.top + scrollY, w: r.width, h: r.height}; };
  const imgs = [...document.images].map(i => ({alt: i.alt, complete: i.complete,
    nw: i.naturalWidth, nh: i.naturalHeight, ...box(i)}));
  const els = [...document.querySelectorAll('img, table, h1, h2, p, div.adv')]
    .filter(e => { const b = box(e); return e.checkVisibility() && b.w > 0 && b.h > 0; });
  const overlaps = [];
  for (let i = 0; i < els.length; i++) for (let j = i + 1; j < els.length; j++) {
    const a = els[i], b = els[j];
    if (a.contains(b) || b.contains(a)) continue;
    const p = box(a), q = box(b);
    const w = Math.min(p.x + p.w, q.x + q.w) - Math.max(p.x, q.x);
    const h = Math.min(p.y + p.h, q.y + q.h) - Math.max(p.y, q.y);
    if (w > 1 && h > 1) overlaps.push([a.tagName + ' ' + (a.alt || a.textContent.slice(0, 40)),
                                       b.tagName + ' ' + (b.alt || b.textContent.slice(0, 40))]);
  }
  const heads = [...document.querySelectorAll('table')].map(t =>
    [...t.querySelectorAll('tr:first-child th')].map(h => h.textContent).filter(x => x));
  return {imgs, overlaps, heads, scrollWidth: document.documentElement.scrollWidth,
          innerWidth: window.innerWidth};
})()"""


def check_in_browser(page, tmp_path, n_images: int) -> bytes:
    """Load the page in headless Chromium (DevTools protocol over a pipe): no console or
    load errors, every figure decoded with a size, nothing overlapping, no sideways
    scrolling, no table with two columns of one name. Returns a full-page screenshot."""
    with Browser(tmp_path / "cdp-profile") as b:
        b.open(page.as_uri())
        lay = b.evaluate(LAYOUT_JS)
        shot = b.screenshot()
        errors = b.errors()
    assert errors == []
    assert len(lay["imgs"]) == n_images
    for i in lay["imgs"]:
        assert i["complete"] and i["nw"] > 0 and i["nh"] > 0, i["alt"]
        assert i["w"] > 0 and i["h"] > 0 and i["x"] + i["w"] <= lay["innerWidth"], i["alt"]
    assert lay["overlaps"] == []
    assert lay["scrollWidth"] <= lay["innerWidth"]
    for head in lay["heads"]:
        assert len(head) == len(set(head)), head
    return shot
