#!/usr/bin/python3
"""Decodes audio files in headless Chromium with the Web Audio API, as a web or hybrid app would:
decodeAudioData in an OfflineAudioContext at the file's own rate, so nothing is resampled.

Usage: decode-audio.py RATE FILE...
Prints one JSON line: {"files": [{"path": ..., "frames": N, "firstSound": F}, ...]}, where
firstSound is the first frame of channel 0 louder than 0.01 (-1 if none), or {"path", "error"}.
Exits 77 when selenium or the browser is missing, 1 on a driver failure.
"""
import base64
import json
import sys

try:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
except ImportError:
    print("selenium is not installed", file=sys.stderr)
    sys.exit(77)

DECODE = """
const [encoded, rate, done] = arguments;
const bytes = Uint8Array.from(atob(encoded), c => c.charCodeAt(0));
new OfflineAudioContext(1, 1, rate).decodeAudioData(bytes.buffer).then(buffer => {
  const samples = buffer.getChannelData(0);
  let first = -1;
  for (let i = 0; i < samples.length; i++) if (Math.abs(samples[i]) > 0.01) { first = i; break; }
  done({frames: buffer.length, rate: buffer.sampleRate, firstSound: first});
}, error => done({error: String(error)}));
"""


def main():
    rate, paths = int(sys.argv[1]), sys.argv[2:]
    options = webdriver.ChromeOptions()
    for argument in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]:
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    try:
        driver.set_script_timeout(60)
        driver.get("about:blank")
        files = []
        for path in paths:
            with open(path, "rb") as f:
                encoded = base64.b64encode(f.read()).decode()
            result = driver.execute_async_script(DECODE, encoded, rate)
            files.append({"path": path, **result})
        print(json.dumps({"files": files}))
    finally:
        driver.quit()


if __name__ == "__main__":
    main()
