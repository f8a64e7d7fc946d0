#!/usr/bin/python3
"""Check a generated session preview page in a real headless Chromium.

The preview page is a single self-contained HTML file: an <audio id="player">,
an inline <svg id="session"> with one <g class="item"> per timeline item, phase
rectangles, a playhead and "current phase / item" labels, all driven by the
page's own JavaScript.  Unit tests can check the generated markup, but only a
browser shows that the page actually works, so this script opens it via
file:// in headless Chromium through WebDriver and checks that

  loads              the document finishes loading and has the player,
  no-console-errors  the browser console got no SEVERE entries,
  no-network         the page requested nothing but file:, data: and blob: URLs,
  item-count         it shows the expected number of items,
  title-once         the session's title is shown once (the heading), not in the picture too,
  keyboard           every sound but a gap has tabindex, role="button" and an aria-label;
                     Tab reaches the first; Enter plays it; → moves the focus with the player,
  click-plays        clicking an item plays it from the item's start,
  plot-click         clicking the waveform, or a lane where there is no sound, seeks there,
  arrow-keys         ArrowRight / ArrowLeft step between items, passing over the gaps,
  back-key           while playing, ← within 1.5 s of an item's start goes to the item
                     before it, later it goes back to the item's own start,
  playback           playing across an item boundary updates the current item
                     label and moves the playhead,
  words              (with --words N) the transcript has N words; Chromium's own
                     WebVTT parser read the captions track the page carries in a
                     data: URL; clicking a word seeks to its first frame and marks
                     it spoken; playing into a cue fires cuechange with its text,
  color-scheme       with prefers-color-scheme light the page is dark on light, with
                     dark (Chromium's emulation) light on dark, the picture's background too,
  phone              at 390x844 (a phone, emulated) the viewport tag gives a 390 px
                     layout, nothing overflows the page sideways, and the playhead stays
                     in view after a seek and while playing (the picture follows it),
  index-page         (with --index PAGE) the batch's index at 390x844: a 390 px layout,
                     no sideways overflow, light and dark,
  screenshot         screenshots at 1280x800 and 390x844, light and dark, are not one
                     colour, the dark ones dark and the light ones light.

Usage:
  preview-page.py PAGE.html --items N [--click-index K] [--words N] [--index INDEX.html]
                  [--screenshots FOLDER]

Prints {"checks": [{"name", "ok", "detail"}, ...]} as JSON on stdout and exits
0 if every check passed, 1 if any failed, 2 on an unexpected error (after
printing the checks it has), and 77 with one line "skip: <reason>" when
selenium, chromium or chromedriver is not available.  It uses Debian's
python3-selenium and the installed chromium-driver; nothing is downloaded.
Started by a python3 without selenium (say a pyenv one first on PATH), it
re-runs itself with /usr/bin/python3.  A run takes a few seconds; a hung page
is cut off by timeouts, and after 45 s the browser is killed.
"""

import argparse
import collections
import json
import os
import pathlib
import shutil
import signal
import struct
import sys
import tempfile
import threading
import time
import zlib

EXIT_SKIP = 77
CHECK_ORDER = ["loads", "no-console-errors", "no-network", "item-count", "title-once", "keyboard",
               "click-plays", "plot-click", "arrow-keys", "back-key", "playback", "words",
               "color-scheme", "phone", "index-page", "screenshot"]
WIDE = (1280, 800)
PHONE = (390, 844)
BACK_WINDOW = 1.5  # seconds after an item's start within which ← goes to the item before
SEEK_TOLERANCE = 0.001  # seconds
PLAYBACK_LEAD = 0.4  # seconds before the boundary playback starts from
PLAYBACK_TIMEOUT = 10.0
PAGE_LOAD_TIMEOUT = 10  # seconds; a page that takes longer is broken
COMMAND_TIMEOUT = 15  # seconds for any one WebDriver command (HTTP read timeout)
RUN_BUDGET = 45  # seconds; then the browser is killed so the run ends before 60 s
ALLOWED_URL_SCHEMES = ("file:", "data:", "blob:")
SYSTEM_PYTHON = "/usr/bin/python3"


# --------------------------------------------------------------------------
# Environment


def import_selenium_or_reexec():
    """Import selenium; if this interpreter lacks it (e.g. a pyenv python3
    first on PATH), re-run the script once with Debian's /usr/bin/python3,
    which is the interpreter python3-selenium is installed for."""
    try:
        import selenium  # noqa: F401
        return None
    except ImportError as error:
        reason = "cannot import selenium in %s (%s)" % (sys.executable, error)
    if (os.path.exists(SYSTEM_PYTHON)
            and os.path.realpath(sys.executable) != os.path.realpath(SYSTEM_PYTHON)
            and not os.environ.get("PREVIEW_PAGE_REEXEC")):
        os.environ["PREVIEW_PAGE_REEXEC"] = "1"
        sys.stdout.flush()
        os.execv(SYSTEM_PYTHON, [SYSTEM_PYTHON, os.path.abspath(__file__)] + sys.argv[1:])
    return reason


def find_program(*names):
    for name in names:
        candidate = os.path.join("/usr/bin", name)
        if os.access(candidate, os.X_OK):
            return candidate
    for name in names:
        found = shutil.which(name)
        if found:
            return found
    return None


def skip(reason):
    print("skip: %s" % reason)
    sys.exit(EXIT_SKIP)


# --------------------------------------------------------------------------
# Results


class Report:
    def __init__(self):
        self.checks = {}

    def add(self, name, ok, detail):
        self.checks[name] = {"name": name, "ok": bool(ok), "detail": detail}

    def run(self, name, function, *args):
        """Run one check; a WebDriver error inside it (a JavaScript exception,
        a missing element, a timeout) fails that check, not the script."""
        from selenium.common.exceptions import WebDriverException
        try:
            ok, detail = function(*args)
        except WebDriverException as error:
            ok, detail = False, "%s: %s" % (type(error).__name__, first_line(error))
        self.add(name, ok, detail)
        return ok

    def add_missing(self, reason):
        for name in CHECK_ORDER:
            if name not in self.checks:
                self.add(name, False, "not run or interrupted: %s" % reason)

    def as_json(self):
        ordered = sorted(self.checks.values(),
                         key=lambda c: CHECK_ORDER.index(c["name"]) if c["name"] in CHECK_ORDER else 99)
        return json.dumps({"checks": ordered}, indent=2)

    def all_ok(self):
        return bool(self.checks) and all(c["ok"] for c in self.checks.values())


def first_line(error):
    lines = (getattr(error, "msg", None) or str(error)).strip().splitlines()
    return lines[0][:300] if lines else ""


def wait_for(predicate, timeout, interval=0.02):
    """Poll predicate() until it returns a truthy value or timeout seconds pass;
    returns (truthy?, last value)."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value or time.monotonic() >= deadline:
            return bool(value), value
        time.sleep(interval)


# --------------------------------------------------------------------------
# Browser


def start_browser(chromium, chromedriver, profile_dir):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.remote.remote_connection import RemoteConnection

    # A page that hangs its renderer also hangs chromedriver's replies; never wait forever.
    RemoteConnection.set_timeout(COMMAND_TIMEOUT)

    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--autoplay-policy=no-user-gesture-required", "--window-size=1400,900",
                 "--user-data-dir=%s" % profile_dir,
                 "--no-first-run", "--no-default-browser-check", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--mute-audio"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    service = Service(chromedriver)
    try:
        driver = webdriver.Chrome(service=service, options=options)
    except Exception:
        service.stop()
        raise
    driver.set_page_load_timeout(PAGE_LOAD_TIMEOUT)
    driver.set_script_timeout(5)
    driver.implicitly_wait(0)
    return driver


def browser_processes(profile_dir):
    """Ids of the Chromium processes started with our (unique) --user-data-dir."""
    marker = ("--user-data-dir=%s" % profile_dir).encode()
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open("/proc/%s/cmdline" % entry, "rb") as f:
                    if marker in f.read().split(b"\0"):
                        pids.append(int(entry))
            except OSError:
                pass
    return pids


def kill_browser(driver_process, profile_dir):
    """SIGKILL chromedriver and the Chromium processes of this run (only those)."""
    pids = browser_processes(profile_dir)
    if driver_process is not None and driver_process.poll() is None:
        pids.append(driver_process.pid)
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    wait_for(lambda: not any(process_alive(pid) for pid in pids), 3, interval=0.05)
    return pids


def process_alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def remove_profile(profile_dir):
    for _ in range(5):  # a dying network service may still write a file or two
        shutil.rmtree(profile_dir, ignore_errors=True)
        if not os.path.exists(profile_dir):
            return
        time.sleep(0.2)
    print("warning: could not remove %s" % profile_dir, file=sys.stderr)


def stop_browser(driver, profile_dir):
    """driver.quit(), but give up after 10 s (a hung renderer can block it)
    and make sure no process of this run survives."""
    quitter = threading.Thread(target=driver.quit, daemon=True)
    quitter.start()
    quitter.join(10)
    leftovers = kill_browser(driver.service.process, profile_dir)
    if quitter.is_alive() or leftovers:
        print("warning: had to kill %d browser processes" % len(leftovers), file=sys.stderr)


class Logs:
    """Accumulates the browser console and performance logs; WebDriver hands
    each entry out only once, so they are drained after every step."""

    def __init__(self, driver):
        self.driver = driver
        self.console = []
        self.requests = []

    def drain(self):
        self.console.extend(self.driver.get_log("browser"))
        for entry in self.driver.get_log("performance"):
            try:
                message = json.loads(entry["message"])["message"]
            except (KeyError, ValueError):
                continue
            params = message.get("params", {})
            if message.get("method") == "Network.requestWillBeSent":
                self.requests.append((params.get("type"), params.get("request", {}).get("url", "")))
            elif message.get("method") == "Network.webSocketCreated":
                self.requests.append(("WebSocket", params.get("url", "")))

    def page_requests(self, page_url):
        """The requests from the navigation to page_url on; earlier ones belong
        to the tab Chromium opens at start (here chrome://new-tab-page-third-party/)."""
        for position, (kind, url) in enumerate(self.requests):
            if kind == "Document" and url.split("#")[0] == page_url:
                return [url for _, url in self.requests[position:]]
        return None


PAGE_MODEL_JS = """
const svg = document.getElementById('session');
if (!svg) return null;
const item = (g) => ({index: g.dataset.index === undefined ? null : Number(g.dataset.index),
                      overlay: g.dataset.overlay === undefined ? null : Number(g.dataset.overlay),
                      start: Number(g.dataset.startFrame), kind: g.dataset.kind});
return {
  sampleRate: Number(svg.dataset.sampleRate),
  totalFrames: Number(svg.dataset.totalFrames),
  items: Array.from(svg.querySelectorAll('g.item[data-index]')).map(item),
  overlays: Array.from(svg.querySelectorAll('g.item[data-overlay]')).map(item),
};
"""

STATE_JS = """
const player = document.getElementById('player');
const label = document.getElementById('current-item');
const playhead = document.getElementById('playhead');
return {
  time: player.currentTime, paused: player.paused, seeking: player.seeking,
  itemText: label ? label.textContent : null,
  itemIndex: label && label.dataset.index !== undefined && label.dataset.index !== ''
             ? Number(label.dataset.index) : null,
  phaseText: (document.getElementById('current-phase') || {}).textContent,
  x1: playhead ? parseFloat(playhead.getAttribute('x1')) : null,
};
"""


def model_problem(model):
    """Why the timeline data in the page cannot be used, or None."""
    if model is None:
        return "the page has no svg#session"
    if not (isinstance(model["sampleRate"], (int, float)) and model["sampleRate"] > 0):
        return "svg#session has no valid data-sample-rate"
    if not (isinstance(model["totalFrames"], (int, float)) and model["totalFrames"] > 0):
        return "svg#session has no valid data-total-frames"
    for item in model["items"] + model["overlays"]:
        if not isinstance(item["start"], (int, float)):
            return "a g.item has no numeric data-start-frame"
    return None


def page_state(driver):
    return driver.execute_script(STATE_JS)


def set_time(driver, seconds):
    """Seek the player directly (for preconditions) and wait for the seek."""
    driver.execute_script("document.getElementById('player').currentTime = arguments[0];", seconds)
    wait_for(lambda: not page_state(driver)["seeking"], 5)


def wait_for_time(driver, expected, timeout=5):
    ok, state = wait_for(lambda: (lambda s: s if abs(s["time"] - expected) <= SEEK_TOLERANCE else None)(
        page_state(driver)), timeout)
    return ok, (state if ok else page_state(driver))["time"]


# --------------------------------------------------------------------------
# Checks


def check_loads(driver, url):
    driver.get(url)
    complete, _ = wait_for(lambda: driver.execute_script("return document.readyState") == "complete", 10)
    found = driver.execute_script("""
        return {player: document.getElementById('player') instanceof HTMLAudioElement,
                session: document.getElementById('session') instanceof SVGSVGElement,
                readyState: document.readyState, title: document.title};""")
    ok = complete and found["player"]
    return ok, "readyState=%s, audio#player=%s, svg#session=%s, title=%r" % (
        found["readyState"], found["player"], found["session"], found["title"])


def check_no_console_errors(logs):
    severe = [entry for entry in logs.console if entry.get("level") == "SEVERE"]
    if not severe:
        return True, "%d console entries, none SEVERE" % len(logs.console)
    return False, "SEVERE: " + " | ".join(entry.get("message", "") for entry in severe)


def check_no_network(logs, page_url):
    requests = logs.page_requests(page_url)
    if requests is None:
        return False, "the performance log has no Document request for %s" % page_url
    foreign = [url for url in requests if not url.startswith(ALLOWED_URL_SCHEMES)]
    if not foreign:
        return True, "%d requests, all file:/data:/blob:" % len(requests)
    return False, "non-local requests: " + ", ".join(foreign)


def check_item_count(model, expected):
    count = len(model["items"]) + len(model["overlays"])
    return count == expected, "%d items with data-index + %d overlays = %d, expected %d" % (
        len(model["items"]), len(model["overlays"]), count, expected)


def item_by_index(model, index):
    return next((item for item in model["items"] if item["index"] == index), None)


def click_target(driver, group):
    """The element to click for an item: the <g> itself if a click at its
    centre lands inside it, otherwise its first <rect> child."""
    lands_inside = driver.execute_script("""
        const g = arguments[0];
        g.scrollIntoView({block: 'center', inline: 'center'});
        const r = g.getBoundingClientRect();
        const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
        return r.width > 0 && r.height > 0 && hit !== null && g.contains(hit);""", group)
    if lands_inside:
        return group, "g"
    from selenium.webdriver.common.by import By
    rects = group.find_elements(By.CSS_SELECTOR, "rect")
    return (rects[0], "first rect") if rects else (group, "g (no rect child)")


RECORD_SEEKS_JS = """
const player = document.getElementById('player');
window.__seeks = [];
if (!window.__recordingSeeks) {
  window.__recordingSeeks = true;
  player.addEventListener('seeking', () => window.__seeks.push(player.currentTime));
}
"""

START_JS = """
const done = arguments[arguments.length - 1];
const player = document.getElementById('player');
if (!player.paused) { done('playing'); return; }
player.play().then(() => done('playing'), (e) => done('play() rejected: ' + e.name + ': ' + e.message));
"""


def record_seeks(driver):
    """From now on, note where every seek of the player goes (its currentTime at 'seeking')."""
    driver.execute_script(RECORD_SEEKS_JS)


def first_seek(driver, timeout=3):
    """The time the first seek since record_seeks went to, or None."""
    _, seeks = wait_for(lambda: driver.execute_script("return window.__seeks;"), timeout)
    return seeks[0] if seeks else None


def pause(driver):
    driver.execute_script("document.getElementById('player').pause();")


def stops(model):
    """The items the arrow keys stop at (all but the gaps), in time order."""
    return sorted((item for item in model["items"] if item["kind"] != "gap"),
                  key=lambda item: (item["start"], item["index"]))


def check_click_plays(driver, model, index):
    from selenium.common.exceptions import WebDriverException
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By

    item = item_by_index(model, index)
    if item is None:
        return False, "no g.item[data-index=\"%d\"]" % index
    expected = item["start"] / model["sampleRate"]
    # Start somewhere else, paused, so that a click which does nothing cannot pass.
    duration = model["totalFrames"] / model["sampleRate"]
    pause(driver)
    set_time(driver, (expected + duration / 2) % duration if duration > 0 else expected + 1)
    before = page_state(driver)["time"]
    record_seeks(driver)

    group = driver.find_element(By.CSS_SELECTOR, 'g.item[data-index="%d"]' % index)
    target, how = click_target(driver, group)
    try:
        ActionChains(driver).move_to_element(target).click().perform()
    except WebDriverException:
        if how != "g":
            raise
        rect = group.find_element(By.CSS_SELECTOR, "rect")
        how = "first rect (g not clickable)"
        ActionChains(driver).move_to_element(rect).click().perform()
    went = first_seek(driver)
    playing, state = wait_for(lambda: (lambda s: s if not s["paused"] else None)(page_state(driver)), 3)
    state = state or page_state(driver)
    pause(driver)
    ok = went is not None and abs(went - expected) <= SEEK_TOLERANCE and playing
    return ok, ("clicked %s of item %d at %.6f s: seeked to %s, expected %.6f s (start frame %d / %d Hz); %s at %.3f s"
                % (how, index, before, "%.6f s" % went if went is not None else "nowhere", expected,
                   item["start"], model["sampleRate"], "playing" if playing else "NOT PLAYING", state["time"]))


PLOT_POINTS_JS = """
const svg = document.getElementById('session');
svg.scrollIntoView({block: 'center', inline: 'nearest'});
const box = svg.getBoundingClientRect();
const view = svg.viewBox.baseVal;
const scale = box.width / view.width;
const left = Number(svg.dataset.plotLeft), width = Number(svg.dataset.plotWidth);
const top = Number(svg.dataset.plotTop), bottom = Number(svg.dataset.plotBottom);
// A point in whole pixels (as a mouse event's clientX and clientY are), and where it is in the picture.
const client = (x, y) => {
  const p = {x: Math.round(box.left + x * scale), y: Math.round(box.top + y * (box.height / view.height))};
  return Object.assign(p, {svgX: (p.x - box.left) / scale});
};
const onPlot = (p) => {
  const hit = document.elementFromPoint(p.x, p.y);
  return hit !== null && svg.contains(hit) && hit.closest('g.item') === null;
};
const points = [];
const wave = svg.querySelector('polygon.waveform');
if (wave) {
  const b = wave.getBBox();
  const p = client(left + 0.7 * width, b.y + b.height / 2);
  if (onPlot(p)) points.push(Object.assign({what: 'the waveform'}, p));
}
// A lane where no sound is: the first such point, row by row, from a third of the way in.
const laneBottom = wave ? wave.getBBox().y : bottom;
search:
for (let y = top + 20; y < laneBottom; y += 6) {
  for (let f = 0.33; f < 0.97; f += 0.02) {
    const p = client(left + f * width, y);
    if (onPlot(p)) { points.push(Object.assign({what: 'an empty lane'}, p)); break search; }
  }
}
return {points, left, width};
"""


def click_at(driver, x, y):
    """A real left click at the viewport point (x, y), through Chromium's input pipeline."""
    for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
        driver.execute_cdp_cmd("Input.dispatchMouseEvent", {
            "type": kind, "x": x, "y": y, "button": "left" if kind != "mouseMoved" else "none",
            "clickCount": 1 if kind != "mouseMoved" else 0})


def check_plot_click(driver, model):
    rate, total = model["sampleRate"], model["totalFrames"]
    pause(driver)
    found = driver.execute_script(PLOT_POINTS_JS)
    points = found["points"]
    whats = [point["what"] for point in points]
    if whats != ["the waveform", "an empty lane"]:
        return False, "found only %s to click on" % (", ".join(whats) or "nothing")
    details, ok = [], True
    for point in points:
        set_time(driver, 0)
        record_seeks(driver)
        expected = round((point["svgX"] - found["left"]) / found["width"] * total) / rate
        click_at(driver, point["x"], point["y"])
        went = first_seek(driver)
        step_ok = went is not None and abs(went - expected) <= SEEK_TOLERANCE
        ok = ok and step_ok
        details.append("%s at (%d, %d): seeked to %s, expected %.6f s%s" % (
            point["what"], point["x"], point["y"], "%.6f s" % went if went is not None else "nowhere",
            expected, "" if step_ok else " WRONG"))
    paused = page_state(driver)["paused"]
    return ok and paused, "; ".join(details) + ("" if paused else "; it plays (a seek should not start it)")


def check_arrow_keys(driver, model, index):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    ordered = stops(model)
    rate = model["sampleRate"]
    item = item_by_index(model, index)
    if item is None or item["kind"] == "gap":
        item = ordered[min(1, len(ordered) - 1)] if ordered else None
    if item is None or len(ordered) < 2:
        return False, "need item %d and at least two items that are not gaps (have %d)" % (index, len(ordered))
    later = [other for other in ordered if other["start"] > item["start"]]
    earlier = [other for other in ordered if other["start"] < item["start"]]
    if later:  # right to the next item, left back to this one
        runs = [(item, [(Keys.ARROW_RIGHT, "ArrowRight", later[0]), (Keys.ARROW_LEFT, "ArrowLeft", item)])]
    elif earlier:  # the last item: left to the previous one, right back
        runs = [(item, [(Keys.ARROW_LEFT, "ArrowLeft", earlier[-1]), (Keys.ARROW_RIGHT, "ArrowRight", item)])]
    else:
        return False, "all items start at the same frame; nothing to step to"
    # Over a gap: from the item before it, right goes past the gap, and left comes back.
    gaps = [gap for gap in model["items"] if gap["kind"] == "gap"]
    over = None
    for gap in gaps:
        before = [other for other in ordered if other["start"] < gap["start"]]
        after = [other for other in ordered if other["start"] > gap["start"]]
        if before and after:
            over = (gap, before[-1], after[0])
            break
    if over is None:
        return False, "no gap with an item before it and one after it (%d gaps)" % len(gaps)
    gap, before, after = over
    runs.append((before, [(Keys.ARROW_RIGHT, "ArrowRight", after), (Keys.ARROW_LEFT, "ArrowLeft", before)]))

    pause(driver)
    driver.execute_script("if (document.activeElement) document.activeElement.blur();")
    body = driver.find_element(By.TAG_NAME, "body")
    details, ok = [], True
    for start, steps in runs:
        set_time(driver, start["start"] / rate)
        details.append("from item %d at %.6f s:" % (start["index"], start["start"] / rate))
        for key, key_name, goal in steps:
            body.send_keys(key)
            expected = goal["start"] / rate
            step_ok, actual = wait_for_time(driver, expected, timeout=3)
            ok = ok and step_ok
            details.append("%s -> %.6f s (item %d starts at %.6f s)%s" % (
                key_name, actual, goal["index"], expected, "" if step_ok else " WRONG"))
            if not step_ok:
                break
    return ok, " ".join(details) + " (over gap %d at %.3f s)" % (gap["index"], gap["start"] / rate)


def check_back_key(driver, model):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    rate, total = model["sampleRate"], model["totalFrames"]
    ordered = stops(model)
    # An item with one before it that lasts (to the next item) long enough to be 2 s into while playing.
    candidates = [(ordered[k - 1], ordered[k]) for k in range(1, len(ordered))
                  if ordered[k - 1]["start"] < ordered[k]["start"]
                  and ((ordered[k + 1]["start"] if k + 1 < len(ordered) else total) - ordered[k]["start"]) / rate
                  >= BACK_WINDOW + 1.2]
    if not candidates:
        return False, "no item with one before it and %.1f s to the next" % (BACK_WINDOW + 1.2)
    previous, item = candidates[0]
    body = driver.find_element(By.TAG_NAME, "body")
    details, ok = [], True
    for into, goal, why in ((0.3, previous, "the item before"), (BACK_WINDOW + 0.5, item, "its own start")):
        pause(driver)
        set_time(driver, item["start"] / rate + into)
        started = driver.execute_async_script(START_JS)
        time.sleep(0.15)
        at = page_state(driver)["time"]
        record_seeks(driver)
        body.send_keys(Keys.ARROW_LEFT)
        went = first_seek(driver)
        playing = not page_state(driver)["paused"]
        pause(driver)
        expected = goal["start"] / rate
        step_ok = started == "playing" and went is not None and abs(went - expected) <= SEEK_TOLERANCE
        ok = ok and step_ok
        details.append("%s, ← at %.3f s (%.2f s into item %d) -> %s, expected %.6f s (%s, item %d)%s%s" % (
            started, at, at - item["start"] / rate, item["index"],
            "%.6f s" % went if went is not None else "nowhere", expected, why, goal["index"],
            "" if playing else ", stopped playing", "" if step_ok else " WRONG"))
    return ok, "; ".join(details)


def check_title_once(driver):
    found = driver.execute_script("""
        const title = document.title;
        const shown = Array.from(document.querySelectorAll('body *'))
          .filter((e) => e.children.length === 0 && e.textContent.trim() === title && e.closest('title') === null);
        return {title, shown: shown.map((e) => e.tagName + (e.closest('svg') ? ' in svg' : ''))};""")
    return found["shown"] == ["H1"], "title %r shown by %s" % (found["title"], found["shown"])


KEYBOARD_JS = """
const items = Array.from(document.querySelectorAll('#session g.item'));
const reachable = (g) => g.getAttribute('tabindex') === '0' && g.getAttribute('role') === 'button'
  && (g.getAttribute('aria-label') || '').length > 0;
const wrong = items.filter((g) => reachable(g) === (g.dataset.kind === 'gap'));
const first = items.find(reachable);
return {count: items.length, gaps: items.filter((g) => g.dataset.kind === 'gap').length,
        wrong: wrong.map((g) => g.dataset.kind + ' ' + (g.dataset.index || 'o' + g.dataset.overlay)),
        first: first ? {label: first.getAttribute('aria-label'), start: Number(first.dataset.startFrame)} : null};
"""

FOCUSED_JS = """
const g = document.activeElement && document.activeElement.closest ? document.activeElement.closest('g.item') : null;
return g ? {label: g.getAttribute('aria-label'), start: Number(g.dataset.startFrame),
            index: g.dataset.index === undefined ? null : Number(g.dataset.index)} : null;
"""


def check_keyboard(driver, model):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    rate = model["sampleRate"]
    found = driver.execute_script(KEYBOARD_JS)
    if found["wrong"] or found["first"] is None:
        return False, "%d sounds (%d gaps); wrongly reachable or not: %s" % (
            found["count"], found["gaps"], ", ".join(found["wrong"]) or "none reachable")
    pause(driver)
    set_time(driver, model["totalFrames"] / rate / 2)
    driver.execute_script("if (document.activeElement) document.activeElement.blur(); window.scrollTo(0, 0);")
    presses, focused = 0, None
    while presses < 30 and focused is None:
        ActionChains(driver).send_keys(Keys.TAB).perform()
        presses += 1
        focused = driver.execute_script(FOCUSED_JS)
    if focused is None or focused["label"] != found["first"]["label"]:
        return False, "after %d Tabs the focus is on %r, not the first sound (%r)" % (
            presses, focused, found["first"]["label"])
    record_seeks(driver)
    ActionChains(driver).send_keys(Keys.ENTER).perform()
    went = first_seek(driver)
    playing, _ = wait_for(lambda: not page_state(driver)["paused"], 3)
    pause(driver)
    expected = focused["start"] / rate
    enter_ok = went is not None and abs(went - expected) <= SEEK_TOLERANCE and playing
    # → with the focus on a sound: the player and the focus go to the next item.
    set_time(driver, expected)
    ActionChains(driver).send_keys(Keys.ARROW_RIGHT).perform()
    goal = next((item for item in stops(model) if item["start"] > focused["start"]), None)
    moved, now = wait_for(lambda: (lambda f: f if f and goal and f["index"] == goal["index"] else None)(
        driver.execute_script(FOCUSED_JS)), 3)
    ok = enter_ok and goal is not None and moved
    return ok, ("%d sounds, the %d gaps not reachable; Tab %d times reaches %r; Enter seeks to %s "
                "(expected %.6f s)%s; → moves the focus to %r (expected item %s)" % (
                    found["count"], found["gaps"], presses, focused["label"],
                    "%.6f s" % went if went is not None else "nowhere", expected,
                    " and plays" if playing else " but does NOT play", now and now["label"],
                    goal and goal["index"]))


PLAY_JS = """
const done = arguments[arguments.length - 1];
const player = document.getElementById('player');
// Note the player time at every change of #current-item, inside the page, so
// that the moment of the switch is exact rather than a polling estimate.
const switches = window.__previewPageSwitches = [];
const describe = () => {
  const label = document.getElementById('current-item');
  return label ? label.dataset.index + '|' + label.textContent : null;
};
let last = describe();
new MutationObserver(() => {
  const now = describe();
  if (now !== last) {
    last = now;
    const label = document.getElementById('current-item');
    switches.push({time: player.currentTime, index: label ? Number(label.dataset.index) : null});
  }
}).observe(document.body, {subtree: true, childList: true, characterData: true, attributes: true});
let promise;
try { promise = player.play(); }
catch (e) { done('play() threw ' + e.name + ': ' + e.message); return; }
if (promise && promise.then) {
  promise.then(() => done('playing'), (e) => done('play() rejected: ' + e.name + ': ' + e.message));
} else { done('play() returned no promise'); }
"""


def check_playback(driver, model):
    rate = model["sampleRate"]
    candidates = [item for item in model["items"]
                  if item["index"] != 0 and item["start"] / rate >= 0.5]
    if not candidates:
        return False, "no item with data-index other than 0 starts at or after 0.5 s"
    target = min(candidates, key=lambda item: (item["start"], item["index"]))
    boundary = target["start"] / rate
    set_time(driver, boundary - PLAYBACK_LEAD)
    time.sleep(0.1)  # let the page react to 'seeked'
    before = page_state(driver)
    if before["itemIndex"] == target["index"]:
        return False, "%.3f s before item %d the label already names it (%r)" % (
            PLAYBACK_LEAD, target["index"], before["itemText"])

    play_result = driver.execute_async_script(PLAY_JS)
    started = time.monotonic()

    def crossed():
        state = page_state(driver)
        done = state["itemIndex"] == target["index"] and state["itemText"] != before["itemText"]
        return state if done or state["paused"] and play_result != "playing" else None

    reached, after = wait_for(crossed, PLAYBACK_TIMEOUT, interval=0.01)
    elapsed = time.monotonic() - started
    after = after or page_state(driver)
    driver.execute_script("document.getElementById('player').pause();")
    switches = driver.execute_script("return window.__previewPageSwitches || [];")
    switch = next((s for s in switches if s["index"] == target["index"]), None)

    label_ok = reached and after["itemIndex"] == target["index"]
    # The label must not name the item before the player reaches it.
    early = switch is not None and switch["time"] < boundary - SEEK_TOLERANCE
    moved = (after["x1"] is not None and before["x1"] is not None and after["x1"] > before["x1"])
    ok = play_result == "playing" and label_ok and not early and moved
    switched = ("; label switched at currentTime %.3f s (%+.0f ms from the boundary%s)" % (
        switch["time"], (switch["time"] - boundary) * 1000, ", TOO EARLY" if early else "")
        if switch else "")
    detail = ("%s; item %d at %.3f s, played from %.3f s: label %r (data-index %s) -> %r (data-index %s) "
              "after %.2f s wall%s; playhead x1 %s -> %s%s" % (
                  play_result, target["index"], boundary, before["time"], before["itemText"],
                  before["itemIndex"], after["itemText"], after["itemIndex"], elapsed, switched,
                  before["x1"], after["x1"], "" if moved else " (did not increase)"))
    return ok, detail


WORDS_JS = """
const track = document.getElementById("captions");
const words = Array.from(document.querySelectorAll("#transcript .word"), (w) => ({
  text: w.textContent, start: Number(w.dataset.startFrame), end: Number(w.dataset.endFrame)}));
const cues = track && track.track.cues ? Array.from(track.track.cues, (c) => ({
  start: c.startTime, end: c.endTime, text: c.getCueAsHTML().textContent})) : [];
return {trackState: track ? track.readyState : null, mode: track ? track.track.mode : null, words, cues};
"""


def check_words(driver, model, expected):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By

    rate = model["sampleRate"]
    ok_loaded, data = wait_for(lambda: (lambda d: d if d["trackState"] == 2 else None)(
        driver.execute_script(WORDS_JS)), 5)
    data = data or driver.execute_script(WORDS_JS)
    words, cues = data["words"], data["cues"]
    if len(words) != expected or not ok_loaded or not cues:
        return False, "%d words (expected %d); captions track readyState %s, %d cues" % (
            len(words), expected, data["trackState"], len(cues))
    # Every cue starts at a word's first frame (rounded up to the millisecond).
    starts = [word["start"] / rate for word in words]
    loose = [cue for cue in cues if not any(0 <= cue["start"] - s < 0.001 for s in starts)]
    if loose:
        return False, "cue at %.3f s starts at no word" % loose[0]["start"]

    # A click on a word (the third) seeks to its first frame and marks it spoken.
    target = words[min(2, len(words) - 1)]
    set_time(driver, 0)
    element = driver.find_elements(By.CSS_SELECTOR, "#transcript .word")[min(2, len(words) - 1)]
    ActionChains(driver).move_to_element(element).click().perform()
    ok_seek, actual = wait_for_time(driver, target["start"] / rate)
    spoken = driver.execute_script(
        "const w = document.querySelector('#transcript .word.spoken'); return w ? w.textContent : null;")
    if not ok_seek or spoken != target["text"]:
        return False, "clicked %r: currentTime %.6f s, expected %.6f s; marked spoken: %r" % (
            target["text"], actual, target["start"] / rate, spoken)

    # Playing into the second cue: the browser's cuechange shows its text.
    cue = cues[1] if len(cues) > 1 else cues[0]
    set_time(driver, max(0, cue["start"] - 0.3))
    before = driver.execute_script("return Number(document.getElementById('caption').dataset.changes || 0);")
    play_result = driver.execute_async_script(PLAY_JS)
    reached, shown = wait_for(lambda: (lambda t: t if t == cue["text"] else None)(
        driver.execute_script("return document.getElementById('caption').textContent;")), PLAYBACK_TIMEOUT)
    after = driver.execute_script("return Number(document.getElementById('caption').dataset.changes || 0);")
    driver.execute_script("document.getElementById('player').pause();")
    ok = reached and after > before and play_result == "playing"
    return ok, "%d words, %d cues; click on %r seeks to %.3f s; %s from %.3f s: caption %r after %d cuechange(s)" % (
        len(words), len(cues), target["text"], actual, play_result, cue["start"] - 0.3,
        shown, after - before)


def luminance(css_colour):
    """The relative luminance (0 black to 1 white) of a computed CSS colour, rgb() or rgba()."""
    inside = css_colour[css_colour.index("(") + 1:css_colour.index(")")]
    red, green, blue = [float(part) for part in inside.replace("/", " ").replace(",", " ").split()][:3]
    return (0.2126 * red + 0.7152 * green + 0.0722 * blue) / 255


def emulate(driver, size=None, scheme=None):
    """Chromium's emulation: the viewport (a phone's is mobile: its viewport tag counts) and
    prefers-color-scheme."""
    if size is not None:
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
            "width": size[0], "height": size[1], "deviceScaleFactor": 1, "mobile": size == PHONE})
    if scheme is not None:
        driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {
            "features": [{"name": "prefers-color-scheme", "value": scheme}]})


def reload(driver, url):
    driver.get(url)
    wait_for(lambda: driver.execute_script("return document.readyState") == "complete", 10)


COLOURS_JS = """
const body = getComputedStyle(document.body);
const back = document.querySelector('#session > rect');
return {back: body.backgroundColor, text: body.color,
        picture: back ? getComputedStyle(back).fill : null};
"""


def check_color_scheme(driver):
    details, ok = [], True
    for scheme in ("light", "dark"):
        emulate(driver, scheme=scheme)
        colours = driver.execute_script(COLOURS_JS)
        back, text = luminance(colours["back"]), luminance(colours["text"])
        picture = luminance(colours["picture"]) if colours["picture"] else None
        if scheme == "light":
            scheme_ok = back > 0.8 and text < 0.3 and (picture is None or picture > 0.8)
        else:
            scheme_ok = back < 0.2 and text > 0.7 and (picture is None or picture < 0.2)
        ok = ok and scheme_ok
        details.append("%s: background %s (%.2f), text %s (%.2f), picture %s%s" % (
            scheme, colours["back"], back, colours["text"], text, colours["picture"], "" if scheme_ok else " WRONG"))
    emulate(driver, scheme="light")
    return ok, "; ".join(details)


LAYOUT_JS = """
const picture = document.querySelector('.picture');
return {innerWidth: window.innerWidth, scrollWidth: document.documentElement.scrollWidth,
        picture: picture ? picture.clientWidth : null,
        svg: picture ? document.getElementById('session').getBoundingClientRect().width : null};
"""

PLAYHEAD_JS = """
const line = document.getElementById('playhead').getBoundingClientRect();
const box = document.querySelector('.picture').getBoundingClientRect();
return {x: line.left + line.width / 2, left: box.left, right: box.right,
        scrolled: document.querySelector('.picture').scrollLeft, time: document.getElementById('player').currentTime};
"""


def in_view(position):
    return position["left"] <= position["x"] <= position["right"]


def check_phone(driver, url, model):
    duration = model["totalFrames"] / model["sampleRate"]
    emulate(driver, size=PHONE)
    reload(driver, url)
    layout = driver.execute_script(LAYOUT_JS)
    fits = layout["innerWidth"] == PHONE[0] and layout["scrollWidth"] <= layout["innerWidth"]
    detail = "layout %d px wide (page %d px), picture box %s px, picture %s px" % (
        layout["innerWidth"], layout["scrollWidth"], layout["picture"], layout["svg"])
    positions = []
    set_time(driver, duration * 0.8)
    time.sleep(0.1)
    positions.append(driver.execute_script(PLAYHEAD_JS))
    started = driver.execute_async_script(START_JS)
    for _ in range(4):
        time.sleep(0.1)
        positions.append(driver.execute_script(PLAYHEAD_JS))
    pause(driver)
    set_time(driver, 0)
    time.sleep(0.1)
    positions.append(driver.execute_script(PLAYHEAD_JS))
    hidden = [p for p in positions if not in_view(p)]
    ok = fits and started == "playing" and not hidden
    detail += "; playhead at %s" % ", ".join(
        "%.2f s x %.0f in [%.0f, %.0f] (scrolled %d)%s" % (p["time"], p["x"], p["left"], p["right"], p["scrolled"],
                                                          "" if in_view(p) else " OUT OF VIEW")
        for p in positions[:2] + positions[-1:])
    return ok, detail + ("" if started == "playing" else "; " + started)


def check_index_page(driver, index_url):
    emulate(driver, size=PHONE, scheme="light")
    reload(driver, index_url)
    details, ok = [], True
    for scheme in ("light", "dark"):
        emulate(driver, scheme=scheme)
        layout = driver.execute_script(LAYOUT_JS)
        back = luminance(driver.execute_script("return getComputedStyle(document.body).backgroundColor;"))
        scheme_ok = (layout["innerWidth"] == PHONE[0] and layout["scrollWidth"] <= layout["innerWidth"]
                     and (back > 0.8 if scheme == "light" else back < 0.2))
        ok = ok and scheme_ok
        details.append("%s: layout %d px, page %d px, background %.2f%s" % (
            scheme, layout["innerWidth"], layout["scrollWidth"], back, "" if scheme_ok else " WRONG"))
    emulate(driver, scheme="light")
    return ok, "; ".join(details)


def check_screenshots(driver, folder, shots):
    """`shots`: (name, size, scheme, png) taken earlier; each is saved, decoded and judged."""
    details, ok = [], True
    for name, size, scheme, png in shots:
        if folder:
            os.makedirs(folder, exist_ok=True)
            with open(os.path.join(folder, name + ".png"), "wb") as f:
                f.write(png)
        width, height, pixels = decode_png(png)
        counts = collections.Counter(pixels)
        total = max(1, width * height)
        top_share = counts.most_common(1)[0][1] / total if counts else 1.0
        mean = sum(count * (0.2126 * p[0] + 0.7152 * p[1] + 0.0722 * p[2]) / 255
                   for p, count in counts.items()) / total
        shot_ok = len(counts) >= 8 and top_share <= 0.97 and (mean < 0.3 if scheme == "dark" else mean > 0.7)
        ok = ok and shot_ok
        details.append("%s %dx%d px: %d colours, the commonest %.1f%%, mean luminance %.2f%s" % (
            name, width, height, len(counts), top_share * 100, mean, "" if shot_ok else " WRONG"))
    return ok, "; ".join(details) + (", saved in %s" % folder if folder else "")


# --------------------------------------------------------------------------
# PNG decoding (no PIL): enough for the 8/16-bit non-interlaced PNGs Chromium writes.


def decode_png(data):
    """Returns (width, height, list of per-pixel byte strings)."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    position, idat, palette = 8, [], None
    width = height = depth = colour = interlace = None
    while position < len(data):
        length, kind = struct.unpack(">I4s", data[position:position + 8])
        body = data[position + 8:position + 8 + length]
        position += 12 + length
        if kind == b"IHDR":
            width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
        elif kind == b"PLTE":
            palette = [body[i:i + 3] for i in range(0, len(body), 3)]
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
    channels = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}.get(colour)
    if channels is None or depth not in (8, 16) or interlace:
        raise ValueError("unsupported PNG (colour type %s, depth %s, interlace %s)"
                         % (colour, depth, interlace))
    bpp = channels * depth // 8
    stride = width * bpp
    raw = zlib.decompress(b"".join(idat))
    if len(raw) < height * (stride + 1):
        raise ValueError("truncated PNG data")
    previous = bytearray(stride)
    pixels = []
    for y in range(height):
        start = y * (stride + 1)
        row = unfilter(raw[start], bytearray(raw[start + 1:start + 1 + stride]), previous, bpp)
        row_bytes = bytes(row)
        if colour == 3:
            pixels.extend(palette[b] if palette and b < len(palette) else bytes([b]) for b in row_bytes)
        else:
            pixels.extend(row_bytes[x:x + bpp] for x in range(0, stride, bpp))
        previous = row
    return width, height, pixels


def unfilter(kind, row, previous, bpp):
    """Undoes one PNG scanline filter (RFC 2083 section 6) in place."""
    n = len(row)
    if kind == 0:
        pass
    elif kind == 1:  # Sub
        for i in range(bpp, n):
            row[i] = (row[i] + row[i - bpp]) & 0xFF
    elif kind == 2:  # Up
        for i in range(n):
            row[i] = (row[i] + previous[i]) & 0xFF
    elif kind == 3:  # Average
        for i in range(n):
            left = row[i - bpp] if i >= bpp else 0
            row[i] = (row[i] + ((left + previous[i]) >> 1)) & 0xFF
    elif kind == 4:  # Paeth
        for i in range(n):
            a = row[i - bpp] if i >= bpp else 0
            b = previous[i]
            c = previous[i - bpp] if i >= bpp else 0
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            predictor = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
            row[i] = (row[i] + predictor) & 0xFF
    else:
        raise ValueError("bad PNG filter type %d" % kind)
    return row


# --------------------------------------------------------------------------


def parse_arguments():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("page", help="the preview HTML file")
    parser.add_argument("--items", type=int, required=True,
                        help="expected number of g.item elements (data-index plus data-overlay)")
    parser.add_argument("--click-index", type=int, default=3, help="data-index of the item to click")
    parser.add_argument("--words", type=int, help="expected number of words in the transcript")
    parser.add_argument("--index", help="a batch's index.html to check on a phone, light and dark")
    parser.add_argument("--screenshots", help="the folder to save the PNG screenshots in")
    return parser.parse_args()


def take_screenshots(driver, size, shots):
    """Screenshots of the page's top at `size`, light then dark, added to `shots`."""
    name = "wide" if size == WIDE else "phone"
    driver.execute_script("window.scrollTo(0, 0);")
    for scheme in ("light", "dark"):
        emulate(driver, scheme=scheme)
        shots.append(("%s-%s" % (name, scheme), size, scheme, driver.get_screenshot_as_png()))
    emulate(driver, scheme="light")


def run_checks(driver, arguments, report):
    from selenium.common.exceptions import WebDriverException

    logs = Logs(driver)
    url = pathlib.Path(arguments.page).resolve().as_uri()
    shots, shot_errors = [], []

    def shoot(size):
        try:
            take_screenshots(driver, size, shots)
        except WebDriverException as error:
            shot_errors.append("%s: %s" % (type(error).__name__, first_line(error)))

    try:
        emulate(driver, size=WIDE, scheme="light")
        if not report.run("loads", check_loads, driver, url):
            report.add_missing("the page did not load")
            return
        logs.drain()
        model = driver.execute_script(PAGE_MODEL_JS)
        problem = model_problem(model)
        if problem:
            for name in ("item-count", "keyboard", "click-plays", "plot-click", "arrow-keys", "back-key",
                         "playback", "phone"):
                report.add(name, False, problem)
        else:
            report.run("item-count", check_item_count, model, arguments.items)
            report.run("title-once", check_title_once, driver)
            report.run("keyboard", check_keyboard, driver, model)
            report.run("click-plays", check_click_plays, driver, model, arguments.click_index)
            report.run("plot-click", check_plot_click, driver, model)
            report.run("arrow-keys", check_arrow_keys, driver, model, arguments.click_index)
            report.run("back-key", check_back_key, driver, model)
            report.run("playback", check_playback, driver, model)
            if arguments.words is not None:
                report.run("words", check_words, driver, model, arguments.words)
            report.run("color-scheme", check_color_scheme, driver)
            shoot(WIDE)
            report.run("phone", check_phone, driver, url, model)
            shoot(PHONE)
        if arguments.index:
            report.run("index-page", check_index_page, driver, pathlib.Path(arguments.index).resolve().as_uri())
        if shot_errors:
            report.add("screenshot", False, "; ".join(shot_errors))
        else:
            report.run("screenshot", check_screenshots, driver, arguments.screenshots, shots)
    finally:
        # The logs cover the whole session, including playback.
        try:
            logs.drain()
        except Exception as error:
            reason = "cannot read the browser logs: %s: %s" % (type(error).__name__, first_line(error))
            report.add("no-console-errors", False, reason)
            report.add("no-network", False, reason)
        else:
            report.add("no-console-errors", *check_no_console_errors(logs))
            report.add("no-network", *check_no_network(logs, url))


def main():
    arguments = parse_arguments()
    missing = import_selenium_or_reexec()
    if missing:
        skip(missing)
    chromium = find_program("chromium", "chromium-browser", "google-chrome")
    if not chromium:
        skip("chromium not found in /usr/bin or PATH")
    chromedriver = find_program("chromedriver")
    if not chromedriver:
        skip("chromedriver not found in /usr/bin or PATH")
    report = Report()
    if not os.path.isfile(arguments.page):
        print("error: no such page: %s" % arguments.page, file=sys.stderr)
        report.add_missing("no such page")
        print(report.as_json())
        sys.exit(2)

    profile_dir = tempfile.mkdtemp(prefix="preview-page-chromium-")
    driver = None
    status = 0
    # Past the budget, kill the browser: the pending WebDriver command then fails at once.
    watchdog = threading.Timer(RUN_BUDGET, lambda: kill_browser(
        driver.service.process if driver is not None else None, profile_dir))
    watchdog.daemon = True
    watchdog.start()
    try:
        driver = start_browser(chromium, chromedriver, profile_dir)
        run_checks(driver, arguments, report)
        status = 0 if report.all_ok() else 1
    except Exception as error:  # report what we have, then fail loudly
        timed_out = ""
        if watchdog.finished.is_set():
            timed_out = " (the run exceeded %d s; the browser was killed)" % RUN_BUDGET
        print("error%s: %s: %s" % (timed_out, type(error).__name__, first_line(error)), file=sys.stderr)
        report.add_missing("%s%s" % (type(error).__name__, timed_out))
        status = 2
    finally:
        watchdog.cancel()
        if driver is not None:
            stop_browser(driver, profile_dir)
        else:
            kill_browser(None, profile_dir)
        remove_profile(profile_dir)
    print(report.as_json())
    sys.exit(status)


if __name__ == "__main__":
    main()
