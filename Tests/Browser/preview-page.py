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
  click-seeks        clicking an item seeks the player to the item's start,
  arrow-keys         ArrowRight / ArrowLeft step between items,
  playback           playing across an item boundary updates the current item
                     label and moves the playhead,
  words              (with --words N) the transcript has N words; Chromium's own
                     WebVTT parser read the captions track the page carries in a
                     data: URL; clicking a word seeks to its first frame and marks
                     it spoken; playing into a cue fires cuechange with its text,
  screenshot         a screenshot of the timeline is not blank.

Usage:
  preview-page.py PAGE.html --items N [--click-index K] [--words N] [--screenshot OUT.png]

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
CHECK_ORDER = ["loads", "no-console-errors", "no-network", "item-count",
               "click-seeks", "arrow-keys", "playback", "words", "screenshot"]
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
                      start: Number(g.dataset.startFrame)});
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


def check_click_seeks(driver, model, index):
    from selenium.common.exceptions import WebDriverException
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By

    item = item_by_index(model, index)
    if item is None:
        return False, "no g.item[data-index=\"%d\"]" % index
    expected = item["start"] / model["sampleRate"]
    # Start somewhere else so that a click which does nothing cannot pass.
    duration = model["totalFrames"] / model["sampleRate"]
    set_time(driver, (expected + duration / 2) % duration if duration > 0 else expected + 1)
    before = page_state(driver)["time"]

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
    ok, actual = wait_for_time(driver, expected)
    return ok, ("clicked %s of item %d: currentTime %.6f -> %.6f s, expected %.6f s (start frame %d / %d Hz)"
                % (how, index, before, actual, expected, item["start"], model["sampleRate"]))


def check_arrow_keys(driver, model, index):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    ordered = sorted(model["items"], key=lambda item: (item["start"], item["index"]))
    item = item_by_index(model, index)
    if item is None or len(ordered) < 2:
        return False, "need item %d and at least two items with data-index (have %d)" % (index, len(ordered))
    rate = model["sampleRate"]
    later = [other for other in ordered if other["start"] > item["start"]]
    earlier = [other for other in ordered if other["start"] < item["start"]]
    if later:  # right to the next item, left back to this one
        steps = [(Keys.ARROW_RIGHT, "ArrowRight", later[0]), (Keys.ARROW_LEFT, "ArrowLeft", item)]
    elif earlier:  # the last item: left to the previous one, right back
        steps = [(Keys.ARROW_LEFT, "ArrowLeft", earlier[-1]), (Keys.ARROW_RIGHT, "ArrowRight", item)]
    else:
        return False, "all items start at the same frame; nothing to step to"

    set_time(driver, item["start"] / rate)
    body = driver.find_element(By.TAG_NAME, "body")
    details, ok = [], True
    for key, key_name, goal in steps:
        body.send_keys(key)
        expected = goal["start"] / rate
        step_ok, actual = wait_for_time(driver, expected, timeout=3)
        ok = ok and step_ok
        details.append("%s -> %.6f s (item %d starts at %.6f s)%s" % (
            key_name, actual, goal["index"], expected, "" if step_ok else " WRONG"))
        if not step_ok:
            break
    return ok, "from item %d at %.6f s: %s" % (index, item["start"] / rate, "; ".join(details))


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


def check_screenshot(driver, out_path):
    from selenium.common.exceptions import NoSuchElementException
    from selenium.webdriver.common.by import By

    try:
        element = driver.find_element(By.ID, "session")
        driver.execute_script("arguments[0].scrollIntoView({block: 'center'});", element)
        png, what = element.screenshot_as_png, "svg#session"
    except NoSuchElementException:
        png, what = driver.get_screenshot_as_png(), "full page"
    if out_path:
        os.makedirs(os.path.dirname(os.path.abspath(out_path)), exist_ok=True)
        with open(out_path, "wb") as f:
            f.write(png)
    width, height, pixels = decode_png(png)
    counts = collections.Counter(pixels)
    total = max(1, width * height)
    top_share = counts.most_common(1)[0][1] / total if counts else 1.0
    ok = len(counts) >= 8 and top_share <= 0.97
    return ok, "%s %dx%d px, %d distinct colours, most common covers %.1f%%%s" % (
        what, width, height, len(counts), top_share * 100, ", saved to %s" % out_path if out_path else "")


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
    parser.add_argument("--screenshot", help="where to save the PNG screenshot of svg#session")
    return parser.parse_args()


def run_checks(driver, arguments, report):
    logs = Logs(driver)
    url = pathlib.Path(arguments.page).resolve().as_uri()
    try:
        if not report.run("loads", check_loads, driver, url):
            report.add_missing("the page did not load")
            return
        logs.drain()
        model = driver.execute_script(PAGE_MODEL_JS)
        problem = model_problem(model)
        if problem:
            for name in ("item-count", "click-seeks", "arrow-keys", "playback"):
                report.add(name, False, problem)
        else:
            report.run("item-count", check_item_count, model, arguments.items)
            report.run("click-seeks", check_click_seeks, driver, model, arguments.click_index)
            report.run("arrow-keys", check_arrow_keys, driver, model, arguments.click_index)
            report.run("playback", check_playback, driver, model)
            if arguments.words is not None:
                report.run("words", check_words, driver, model, arguments.words)
        report.run("screenshot", check_screenshot, driver, arguments.screenshot)
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
