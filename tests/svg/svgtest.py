#!/usr/bin/env python3
"""tests/svg/svgtest.py - drive dtreport's flame graph SVG in headless Chromium
over the DevTools protocol (stdlib only: a minimal WebSocket client) with real
mouse events, and check zoom, hover, search and the URL state against the
folded counts.

usage: svgtest.py FLAME.svg FOLDED.txt SCREENSHOT.png [DIFF.svg DIFF.png]
Prints PASS/FAIL lines.
"""
import base64
import json
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
import urllib.request

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
failed = False


PREFIX = os.environ.get("SVGTEST_PREFIX", "")


def result(name, ok, why=""):
    global failed
    name = PREFIX + name
    if ok:
        print("PASS " + name, flush=True)
    else:
        failed = True
        print("FAIL %s: %s" % (name, why), flush=True)


class WS:
    """Just enough RFC 6455 for a local DevTools socket."""

    def __init__(self, url):
        m = re.match(r"ws://([^/:]+):(\d+)(/.*)", url)
        self.s = socket.create_connection((m.group(1), int(m.group(2))), timeout=30)
        key = base64.b64encode(os.urandom(16)).decode()
        self.s.sendall(("GET %s HTTP/1.1\r\nHost: %s:%s\r\nUpgrade: websocket\r\n"
                        "Connection: Upgrade\r\nSec-WebSocket-Key: %s\r\n"
                        "Sec-WebSocket-Version: 13\r\n\r\n"
                        % (m.group(3), m.group(1), m.group(2), key)).encode())
        buf = b""
        while b"\r\n\r\n" not in buf:
            chunk = self.s.recv(4096)
            if not chunk:
                raise IOError("websocket handshake: connection closed")
            buf += chunk
        if b" 101 " not in buf.split(b"\r\n")[0]:
            raise IOError("websocket handshake refused: %r" % buf[:200])
        self.buf = buf.split(b"\r\n\r\n", 1)[1]

    def send(self, text):
        data = text.encode()
        hdr = bytearray([0x81])
        n = len(data)
        if n < 126:
            hdr.append(0x80 | n)
        elif n < 65536:
            hdr.append(0x80 | 126)
            hdr += struct.pack(">H", n)
        else:
            hdr.append(0x80 | 127)
            hdr += struct.pack(">Q", n)
        mask = os.urandom(4)
        hdr += mask
        self.s.sendall(bytes(hdr) + bytes(b ^ mask[i % 4] for i, b in enumerate(data)))

    def _read(self, n):
        while len(self.buf) < n:
            chunk = self.s.recv(1 << 20)
            if not chunk:
                raise IOError("websocket closed")
            self.buf += chunk
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def recv(self):
        msg = b""
        while True:
            b0, b1 = self._read(2)
            n = b1 & 0x7f
            if n == 126:
                n = struct.unpack(">H", self._read(2))[0]
            elif n == 127:
                n = struct.unpack(">Q", self._read(8))[0]
            payload = self._read(n)
            op = b0 & 0x0f
            if op == 8:
                raise IOError("websocket closed by peer")
            if op in (0, 1, 2):
                msg += payload
                if b0 & 0x80:
                    return msg.decode()


class Page:
    def __init__(self, ws):
        self.ws, self.id = ws, 0
        self.prompt_answer = None   # what to type into the next prompt()
        self.dialogs = []

    def call(self, method, **params):
        self.id += 1
        want = self.id
        self.ws.send(json.dumps({"id": want, "method": method, "params": params}))
        while True:
            m = json.loads(self.ws.recv())
            if m.get("method") == "Page.javascriptDialogOpening":
                # prompt() blocks the page (and our click) until answered
                self.dialogs.append(m["params"].get("message", ""))
                self.id += 1
                self.ws.send(json.dumps({"id": self.id, "method": "Page.handleJavaScriptDialog",
                                         "params": {"accept": self.prompt_answer is not None,
                                                    "promptText": self.prompt_answer or ""}}))
                continue
            if m.get("id") == want:
                if "error" in m:
                    raise RuntimeError("%s: %s" % (method, m["error"]))
                return m.get("result", {})

    def js(self, expr):
        r = self.call("Runtime.evaluate", expression=expr, returnByValue=True)
        if "exceptionDetails" in r:
            raise RuntimeError("JS: %s: %s" % (expr[:80], r["exceptionDetails"]))
        return r["result"].get("value")

    def wait(self, expr, timeout=20):
        end = time.time() + timeout
        while time.time() < end:
            try:
                if self.js(expr):
                    return True
            except RuntimeError:
                pass
            time.sleep(0.1)
        return False

    def click(self, x, y):
        for t in ("mouseMoved", "mousePressed", "mouseReleased"):
            self.call("Input.dispatchMouseEvent", type=t, x=x, y=y, button="left",
                      clickCount=1)

    def goto(self, url):
        self.call("Page.navigate", url=url)
        time.sleep(0.2)
        return self.wait("document.documentElement.getAttribute('data-ready') === '1'"
                         " && location.href === %s" % json.dumps(url))

    def screenshot(self, path):
        r = self.call("Page.captureScreenshot", format="png")
        with open(path, "wb") as f:
            f.write(base64.b64decode(r["data"]))


def launch():
    prof = tempfile.mkdtemp(prefix="dt-svgtest-")
    p = subprocess.Popen([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
                          "--disable-quic", "--no-first-run", "--disable-background-networking",
                          "--disable-component-update", "--disable-sync",
                          "--user-data-dir=" + prof, "--remote-debugging-port=0",
                          "--window-size=1280,900", "about:blank"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         start_new_session=True)
    port = None
    end = time.time() + 30
    while time.time() < end and port is None:
        line = p.stderr.readline().decode(errors="replace")
        if not line and p.poll() is not None:
            break
        m = re.search(r"DevTools listening on ws://[^:]+:(\d+)/", line)
        if m:
            port = int(m.group(1))
    if port is None:
        p.kill()
        raise RuntimeError("chromium did not start a DevTools endpoint")
    # keep draining stderr so chromium never blocks on a full pipe
    subprocess.Popen(["cat"], stdin=p.stderr, stdout=subprocess.DEVNULL)
    targets = json.load(urllib.request.urlopen("http://127.0.0.1:%d/json/list" % port))
    page = [t for t in targets if t.get("type") == "page"][0]
    return p, prof, Page(WS(page["webSocketDebuggerUrl"]))


def folded_match(path, regex, flags=0):
    """Samples whose stack has a frame matching regex: the expected search."""
    rx = re.compile(regex, flags)
    total = hit = 0
    for line in open(path, errors="surrogateescape"):
        stack, n = line.rstrip("\n").rsplit(" ", 1)
        total += int(n)
        if any(rx.search(f) for f in stack.split(";")):
            hit += int(n)
    return hit, total


FRAME_INFO = """(function (sel) {
  var g = sel(), r = g.querySelector('rect'), b = r.getBoundingClientRect();
  return {s: +g.getAttribute('data-s'), n: +g.getAttribute('data-n'),
          d: +g.getAttribute('data-d'), name: g.querySelector('title').textContent.split('\\n')[0],
          x: b.left + b.width / 2, y: b.top + b.height / 2,
          rx: +r.getAttribute('x'), w: +r.getAttribute('width')};
})(function () { %s })"""


def main():
    svg, folded, shot = sys.argv[1], sys.argv[2], sys.argv[3]
    url = "file://" + os.path.abspath(svg)
    p, prof, pg = launch()
    try:
        pg.call("Page.enable")
        result("load", pg.goto(url), "the SVG's script did not run (no data-ready)")
        cfg = pg.js("JSON.parse(document.documentElement.getAttribute('data-cfg'))")
        _, total = folded_match(folded, "^$")
        result("total", cfg["total"] == total, "SVG total %s, folded %s" % (cfg["total"], total))

        # A frame two levels down, wide enough to hit, not the widest.
        pick = ("var c = Array.prototype.filter.call(document.querySelectorAll('g.f'), function (g) {"
                " var w = +g.querySelector('rect').getAttribute('width');"
                " return +g.getAttribute('data-d') >= 2 && w > 40 && w < %f; });"
                " c.sort(function (a, b) { return (+a.getAttribute('data-s')) - (+b.getAttribute('data-s')) ||"
                " (+a.getAttribute('data-d')) - (+b.getAttribute('data-d')); });"
                " return c[Math.floor(c.length / 2)];" % (cfg["pw"] * 0.6))
        f = pg.js(FRAME_INFO % pick)
        # hover: the details line names the frame
        pg.call("Input.dispatchMouseEvent", type="mouseMoved", x=f["x"], y=f["y"])
        det = pg.js("document.getElementById('details').textContent")
        result("hover", f["name"] in det and "samples" in det, "details %r for %r" % (det, f["name"]))
        title = pg.js("document.elementFromPoint(%f, %f).closest('g.f').querySelector('title').textContent"
                      % (f["x"], f["y"]))
        result("tooltip", title.startswith(f["name"] + "\n") and "%" in title, "title %r" % title)

        pg.click(f["x"], f["y"])
        sel = "return document.querySelector('g.f[data-s=\"%d\"][data-d=\"%d\"]');" % (f["s"], f["d"])
        z = pg.js(FRAME_INFO % sel)
        result("click-zoom-width", abs(z["w"] - cfg["pw"]) < 0.05 and abs(z["rx"] - cfg["x0"]) < 0.05,
               "zoomed frame at x=%s w=%s, want x=%s w=%s" % (z["rx"], z["w"], cfg["x0"], cfg["pw"]))
        outside = pg.js("Array.prototype.filter.call(document.querySelectorAll('g.f'), function (g) {"
                        " var s = +g.getAttribute('data-s'), n = +g.getAttribute('data-n');"
                        " return g.style.display !== 'none' && +g.getAttribute('data-d') >= %d &&"
                        " (s < %d || s + n > %d); }).length" % (f["d"], f["s"], f["s"] + f["n"]))
        result("click-zoom-hides-others", outside == 0, "%d frames outside the zoomed one still shown" % outside)
        kids = pg.js("Array.prototype.filter.call(document.querySelectorAll('g.f'), function (g) {"
                     " return g.style.display !== 'none' && +g.getAttribute('data-d') > %d; })"
                     ".map(function (g) { return [+g.querySelector('rect').getAttribute('width'),"
                     " +g.getAttribute('data-n')]; })" % f["d"])
        want = cfg["pw"] / f["n"]
        # widths are written with 2 decimals
        bad = [k for k in kids if abs(k[0] - k[1] * want) > 0.006]
        result("click-zoom-scales-children", kids and not bad,
               "children not scaled to %g px/sample: %r" % (want, bad[:5]))
        h = pg.js("location.hash")
        result("zoom-in-url", "z=%d:%d" % (f["s"], f["d"]) in h, "hash %r" % h)

        # reset zoom by clicking the button
        b = pg.js("(function () { var b = document.getElementById('unzoom').getBoundingClientRect();"
                  " return {x: b.left + b.width / 2, y: b.top + b.height / 2}; })()")
        pg.click(b["x"], b["y"])
        z = pg.js(FRAME_INFO % sel)
        result("reset-zoom", abs(z["w"] - f["w"]) < 0.05 and "z=" not in pg.js("location.hash"),
               "after reset w=%s (was %s), hash %r" % (z["w"], f["w"], pg.js("location.hash")))

        # search: matched samples (nested matches once) == folded lines with a match
        for rx in ["^main$", "schedule|mod_func", "^do_syscall_64$", "work", "^vfs_", "nomatchatall"]:
            want_hit, _ = folded_match(folded, rx)
            pct = pg.js("window.flameSearch(%s)" % json.dumps(rx))
            got = pg.js("document.documentElement.getAttribute('data-matched')")
            label = pg.js("document.getElementById('matched').textContent")
            ok = got is not None and int(got) == want_hit and \
                abs(pct - 100.0 * want_hit / total) < 1e-9 and \
                ("%.2f%%" % (100.0 * want_hit / total)) in label
            result("search-%s" % re.sub(r"[^a-z0-9]+", "_", rx).strip("_"), ok,
                   "matched %s (%r), folded says %d of %d" % (got, label, want_hit, total))
        # the Search button: prompt() answered like a user would
        pg.js("window.flameSearch('')")
        sb = pg.js("(function () { var b = document.getElementById('search').getBoundingClientRect();"
                   " return {x: b.left + b.width / 2, y: b.top + b.height / 2}; })()")
        pg.prompt_answer = "schedule"
        pg.click(sb["x"], sb["y"])
        pg.prompt_answer = None
        want_hit, _ = folded_match(folded, "schedule")
        got = pg.js("document.documentElement.getAttribute('data-matched')")
        result("search-button", len(pg.dialogs) == 1 and got == str(want_hit),
               "dialogs %r, matched %s, want %d" % (pg.dialogs, got, want_hit))
        pg.click(sb["x"], sb["y"])   # now "Reset Search"
        got = pg.js("document.documentElement.getAttribute('data-matched')")
        result("search-button-reset", got == "" and len(pg.dialogs) == 1,
               "after reset: matched %r, dialogs %r" % (got, pg.dialogs))
        # case-insensitive search (flamegraph.pl's 'ic'): API, button, URL
        for rx in ["MAIN", "^Do_Syscall", "VFS_|Schedule"]:
            want_hit, _ = folded_match(folded, rx, re.I)
            want_cs, _ = folded_match(folded, rx)
            pg.js("window.flameSearch(%s, true)" % json.dumps(rx))
            got = pg.js("document.documentElement.getAttribute('data-matched')")
            ok = got is not None and int(got) == want_hit and want_hit > want_cs
            result("search-ignorecase-%s" % re.sub(r"[^a-z0-9]+", "_", rx.lower()).strip("_"), ok,
                   "matched %s, folded says %d (case-sensitive %d)" % (got, want_hit, want_cs))
        result("search-ignorecase-in-url", "i=1" in pg.js("location.hash"), pg.js("location.hash"))
        ib = pg.js("(function () { var b = document.getElementById('ignorecase').getBoundingClientRect();"
                   " return {x: b.left + b.width / 2, y: b.top + b.height / 2}; })()")
        pg.click(ib["x"], ib["y"])   # off again: the same regex is case-sensitive
        got = pg.js("document.documentElement.getAttribute('data-matched')")
        want_cs, _ = folded_match(folded, "VFS_|Schedule")
        result("search-ignorecase-button", got is not None and int(got) == want_cs and
               "i=1" not in pg.js("location.hash"), "matched %s, want %d" % (got, want_cs))
        pg.js("window.flameSearch('', false)")
        pg.js("window.flameSearch('nomatchatall')")
        nhl = pg.js("document.querySelectorAll('rect[fill=\"rgb(230,0,230)\"]').length")
        result("search-highlight-cleared-on-nomatch", nhl == 0, "%d frames still highlighted" % nhl)
        rx = "^main$"
        want_hit, _ = folded_match(folded, rx)
        pg.js("window.flameSearch(%s)" % json.dumps(rx))
        nhl = pg.js("document.querySelectorAll('rect[fill=\"rgb(230,0,230)\"]').length")
        result("search-highlights", nhl > 0, "no highlighted frame for %s" % rx)
        h = pg.js("location.hash")
        result("search-in-url", "s=" + "%5Emain%24" in h or "s=^main$" in h, "hash %r" % h)
        pg.screenshot(shot)
        result("screenshot", os.path.getsize(shot) > 1000, "empty screenshot")

        # state in the URL survives a reload: open a link with zoom and search
        link = url + "#z=%d:%d&s=%s" % (f["s"], f["d"], "schedule")
        pg.goto("about:blank")
        ok = pg.goto(link)
        z = pg.js(FRAME_INFO % sel)
        got = pg.js("document.documentElement.getAttribute('data-matched')")
        want_hit, _ = folded_match(folded, "schedule")
        result("url-state-restored", ok and abs(z["w"] - cfg["pw"]) < 0.05 and got == str(want_hit),
               "after opening %s: w=%s matched=%s want %d" % (link, z["w"], got, want_hit))

        # clicking the root frame resets the zoom
        root = pg.js(FRAME_INFO % "return document.querySelector('g.f[data-d=\"0\"]');")
        pg.click(root["x"], root["y"])
        z = pg.js(FRAME_INFO % sel)
        result("root-click-unzooms", abs(z["w"] - f["w"]) < 0.05, "w=%s want %s" % (z["w"], f["w"]))

        if len(sys.argv) > 5:
            durl = "file://" + os.path.abspath(sys.argv[4])
            ok = pg.goto(durl)
            n = pg.js("document.querySelectorAll('g.f').length")
            result("diff-loads", ok and n > 1, "diff SVG: ready=%s frames=%s" % (ok, n))
            d = pg.js(FRAME_INFO % "return document.querySelectorAll('g.f')[1];")
            pg.click(d["x"], d["y"])
            z = pg.js(FRAME_INFO % "return document.querySelectorAll('g.f')[1];")
            result("diff-click-zoom", abs(z["w"] - cfg["pw"]) < 0.05 or d["d"] == 0,
                   "diff frame not zoomed: w=%s" % z["w"])
            pg.screenshot(sys.argv[5])
    except Exception as e:  # a broken page or protocol error is a failure, not a crash
        result("driver", False, repr(e))
    finally:
        try:
            os.killpg(p.pid, signal.SIGTERM)
        except OSError:
            pass
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
        shutil.rmtree(prof, ignore_errors=True)
    return 0


if __name__ == "__main__":
    signal.alarm(240)
    sys.exit(main())
