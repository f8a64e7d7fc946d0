#!/usr/bin/env python3
"""Regenerates Fixtures/bad/: broken clips that render-session must refuse with a clear error.

Run from the repository root after scripts/make-fixtures.py: python3 scripts/make-bad-fixtures.py
Uses only the fixture clips and Python; the random bytes come from a fixed seed.
"""
import os
import random
import struct

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CACHE = os.path.join(ROOT, "Fixtures", "cache")
BAD = os.path.join(ROOT, "Fixtures", "bad")
OPENING = os.path.join(CACHE, "4b0b675e1097fa06f132563b96bd40e80a4d691fed028f63a032d86811764305.mp3")  # 22.05 kHz mono


def write(name, data):
    with open(os.path.join(BAD, name), "wb") as f:
        f.write(data)


def main():
    os.makedirs(BAD, exist_ok=True)
    opening = open(OPENING, "rb").read()
    stereo_name = next(n for n in sorted(os.listdir(CACHE)) if _is_44k_stereo(os.path.join(CACHE, n)))
    stereo = open(os.path.join(CACHE, stereo_name), "rb").read()
    write("empty.mp3", b"")
    # An ID3v2.3 tag with 1,014 bytes of padding and nothing after it.
    write("id3-only.mp3", b"ID3" + bytes([3, 0, 0]) + bytes([0, 0, 0x07, 0x76]) + bytes(1014))
    write("random-bytes.mp3", random.Random(20261122).randbytes(4096))
    write("html-error-page.mp3", b"<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title></head>"
                                 b"<body><h1>502 Bad Gateway</h1><p>The upstream TTS service did not answer.</p></body></html>\n")
    write("cut-to-a-third.mp3", opening[: len(opening) // 3])
    write("rate-change.mp3", opening + stereo)
    # A 16-bit 8 kHz mono WAV whose data chunk declares 8,000 frames; the file holds 3,000.
    frames, holds = 8000, 3000
    header = b"RIFF" + struct.pack("<I", 36 + frames * 2) + b"WAVE"
    header += b"fmt " + struct.pack("<IHHIIHH", 16, 1, 1, 8000, 16000, 2, 16)
    header += b"data" + struct.pack("<I", frames * 2)
    write("short-data.wav", header + b"".join(struct.pack("<h", (i * 37) % 2000 - 1000) for i in range(holds)))
    print(f"wrote {len(os.listdir(BAD))} files to {BAD}")


def _is_44k_stereo(path):
    data = open(path, "rb").read(4096)
    for i in range(len(data) - 4):
        if data[i] == 0xFF and data[i + 1] & 0xE0 == 0xE0:
            version, rate_index, mode = (data[i + 1] >> 3) & 3, (data[i + 2] >> 2) & 3, data[i + 3] >> 6
            return version == 3 and rate_index == 0 and mode != 3
    return False


if __name__ == "__main__":
    main()
