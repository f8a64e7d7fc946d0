#!/usr/bin/env python3
"""Regenerates Fixtures/: the example scripts, and a clip cache holding every text they need.

Each clip is spoken by eSpeak NG (the `espeak-ng` command, voice en-us) and encoded by LAME at
64 kb/s mono (128 kb/s stereo): at 22.05 and 24 kHz, 64 kb/s is the lowest rate at which LAME
still writes the gapless (LAME/Xing) tag. A few clips are converted with SoX first, so that the edge-case script has clips at
other sample rates and channel counts. The cache key is the project's: lowercase hex SHA-256 of
the UTF-8 bytes of text + voice + speed ("1.0"). Fixtures/clips.json records, for every clip,
the frame count of the PCM it was encoded from, which the tests compare with gapless decoding.

Needs: espeak-ng, lame, sox (apt-get install espeak-ng lame sox). Run from the repository root:
    python3 scripts/make-fixtures.py
"""
import hashlib
import json
import os
import subprocess
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "Fixtures")
CACHE = os.path.join(FIXTURES, "cache")
VOICE = "espeak:en-us"
SPEED = "1.0"  # as Swift writes the Double 1.0

TEN_MINUTE = {
    "id": "ten-minute-session",
    "category": "reactivity",
    "title": "The Space Between",
    "subtitle": "Finding the pause between what happens and what you do",
    "orderIndex": 1,
    "durationSeconds": 600,
    "segments": [
        {"id": "opening", "startSeconds": 0, "phase": "opening", "text":
            "Welcome. Find a position that lets you be both relaxed and awake. "
            "Let your eyes close, or rest your gaze on the floor a little ahead of you. "
            "Take one slow breath in, and let it go. "
            "For the next few minutes there is nothing to fix and nowhere to get to. "
            "We will simply practise noticing."},
        {"id": "teachings", "startSeconds": 120, "phase": "teachings", "text":
            "Between something happening and your response to it, there is a small space. "
            "Most of the time we rush straight through it. "
            "A message arrives, a tone of voice lands, and before we know it we have already reacted. "
            "The practice is not to stop feeling. It is to notice the feeling while it is still small. "
            "Perhaps a tightening in the chest, heat in the face, or a quickening of the breath. "
            "When you notice it, name it quietly. Tension. Heat. Hurry. "
            "Naming it is enough to widen the space a little. "
            "In the silence that follows, rest with the breath, and whenever a thought pulls you away, "
            "notice where it took you, and come back."},
        {"id": "closing", "startSeconds": 510, "phase": "closing", "text":
            "Begin to let the practice go. Notice the weight of your body and the sounds around you. "
            "Today, when something stirs you up, see if you can find this space again, even for one breath. "
            "That breath is where your choice lives. When you are ready, open your eyes."},
    ],
    "interjections": [
        {"windowStartSeconds": 350, "windowEndSeconds": 370, "textOptions": [
            "Notice where your attention is right now.",
            "If you have drifted, gently come back to the breath.",
            "Soften the shoulders and the jaw."]},
        {"windowStartSeconds": 440, "windowEndSeconds": 460, "textOptions": [
            "Feel the next breath arrive by itself.",
            "Is there any tension you can let go of?"]},
    ],
}

EDGE_CASES = {
    "id": "edge-cases",
    "category": "tests",
    "title": "Edge cases",
    "subtitle": "Late clips, ties, other sample rates and channel counts, content past the end",
    "orderIndex": 0,
    "durationSeconds": 20,
    "segments": [
        {"id": "first", "startSeconds": 0, "phase": "opening",
         "text": "This first clip runs for a few seconds, past the start of the next one."},
        {"id": "late", "startSeconds": 2, "phase": "opening",
         "text": "This clip was planned at two seconds, so it starts late."},
        {"id": "tie", "startSeconds": 10.5, "phase": "teachings",
         "text": "A segment and an interjection share this start."},
        {"id": "past-the-end", "startSeconds": 19, "phase": "closing",
         "text": "This stereo clip at forty four point one kilohertz runs past the end of the session."},
    ],
    "interjections": [
        {"windowStartSeconds": 10.5, "windowEndSeconds": 10.5, "textOptions": ["Tied."]},
        {"windowStartSeconds": 14, "windowEndSeconds": 15, "textOptions": ["Breathe in.", "Breathe out."]},
    ],
}

# How some edge-case clips are converted before encoding: (sample rate, channels).
CONVERSIONS = {
    "This clip was planned at two seconds, so it starts late.": (16000, 1),
    "This stereo clip at forty four point one kilohertz runs past the end of the session.": (44100, 2),
    "Breathe out.": (24000, 2),
}


def key(text):
    return hashlib.sha256((text + VOICE + SPEED).encode("utf-8")).hexdigest()


def texts(script):
    seen = []
    for segment in script["segments"]:
        seen.append(segment["text"])
    for interjection in script["interjections"]:
        seen.extend(interjection["textOptions"])
    return [t for i, t in enumerate(seen) if t not in seen[:i]]


def soxi_frames(path):
    return int(subprocess.check_output(["soxi", "-s", path], text=True).strip())


def make_clip(text, work):
    spoken = os.path.join(work, "spoken.wav")
    subprocess.run(["espeak-ng", "-v", "en-us", "-w", spoken, text], check=True)
    source = spoken
    rate, channels = CONVERSIONS.get(text, (22050, 1))
    if (rate, channels) != (22050, 1):
        source = os.path.join(work, "converted.wav")
        subprocess.run(["sox", spoken, "-r", str(rate), "-c", str(channels), source], check=True)
    target = os.path.join(CACHE, key(text) + ".mp3")
    # LAME would resample on its own at low bit rates; keep the source's rate.
    bitrate = "64" if channels == 1 else "128"
    subprocess.run(["lame", "--quiet", "--noreplaygain", "-b", bitrate, "--resample", str(rate / 1000),
                    source, target], check=True)
    return {"key": key(text), "text": text, "sampleRate": rate, "channels": channels,
            "sourceFrames": soxi_frames(source)}


def main():
    os.makedirs(CACHE, exist_ok=True)
    os.makedirs(os.path.join(FIXTURES, "scripts"), exist_ok=True)
    for name in os.listdir(CACHE):
        os.remove(os.path.join(CACHE, name))
    clips = []
    with tempfile.TemporaryDirectory() as work:
        for script in (TEN_MINUTE, EDGE_CASES):
            with open(os.path.join(FIXTURES, "scripts", script["id"] + ".json"), "w") as f:
                json.dump(script, f, indent=2, ensure_ascii=False)
                f.write("\n")
            for text in texts(script):
                clips.append(make_clip(text, work))
    with open(os.path.join(FIXTURES, "clips.json"), "w") as f:
        json.dump({"voice": VOICE, "speed": SPEED, "clips": clips}, f, indent=2, ensure_ascii=False)
        f.write("\n")
    print(f"wrote {len(clips)} clips to {CACHE}")


if __name__ == "__main__":
    main()
