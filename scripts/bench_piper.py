"""The Piper rows of the benchmark (docs/performance.md, docs/voices.md): BENCH_ONLY=piper scripts/bench.

Cold means an empty clip cache, so every clip is synthesized; every run starts its own workers.
  engine-alone  Piper itself: one Python process, PiperVoice.load (onnxruntime's default threads),
                every text of the 10-minute fixture spoken in turn (the reference prepare is held to)
  prepare       render-session prepare of the same texts, cold, default settings (2 workers × 1 thread)
  prepare-1x2   the same with --jobs 1 (1 worker × 2 threads)
  cold-clip     prepare of one short sentence, cold: start a worker, load the model, speak, encode, store
  warm-clip     what one more such sentence adds to that run (a second clip on the loaded worker)
  batch-14      batch of the 14 Reactivity meditations, cold, in the Piper voice: wall time and the
                peak memory of the whole process tree (render-session and its workers)
"""
import json
import os
import subprocess
import tempfile
import time

VOICE = "piper:en_US-joe-medium"
ENGINE_ALONE = r'''
import json, sys, time
start = time.monotonic()
from piper import PiperVoice, SynthesisConfig
voice = PiperVoice.load(sys.argv[1])
texts = json.load(open(sys.argv[2]))
frames = 0
for text in texts:
    for chunk in voice.synthesize(text, SynthesisConfig(normalize_audio=False)):
        frames += len(chunk.audio_int16_array)
print(json.dumps({"seconds": time.monotonic() - start, "audioSeconds": frames / voice.config.sample_rate}))
'''


def texts_of(path):
    with open(path) as f:
        script = json.load(f)
    texts = [s["text"] for s in script.get("segments", [])]
    for window in script.get("interjections", []):
        texts += window.get("textOptions", [])
    return sorted(set(texts))


def tree_rss_kib(root_pid):
    """The resident memory of a process and all its descendants, in KiB."""
    children = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            children.setdefault(int(fields[1]), []).append(int(entry))
        except OSError:
            continue
    total, stack = 0, [root_pid]
    while stack:
        pid = stack.pop()
        stack += children.get(pid, [])
        try:
            with open(f"/proc/{pid}/status") as f:
                total += next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))
        except (OSError, StopIteration):
            continue
    return total


def timed(args):
    """Wall seconds and the process tree's peak resident memory (sampled every 20 ms), checking success."""
    start = time.monotonic()
    process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    peak = 0
    while process.poll() is None:
        peak = max(peak, tree_rss_kib(process.pid))
        time.sleep(0.02)
    seconds = time.monotonic() - start
    if process.returncode != 0:
        raise RuntimeError(f"{args[1]} failed: {process.stderr.read()}")
    return seconds, peak


def median(values):
    values = sorted(values)
    return values[len(values) // 2]


def piper_rows(binary, root, runs=3):
    """Measures the rows above; returns the report's lines and its checks."""
    python = subprocess.run(["scripts/setup-piper"], cwd=root, check=True, capture_output=True, text=True).stdout.strip()
    voices = json.loads(subprocess.run([binary, "voices", "--json"], check=True, capture_output=True, text=True).stdout)
    model = next(v["detail"].split(" (")[0] for v in voices["voices"] if v["id"] == VOICE and v["available"])
    fixture = os.path.join(root, "Fixtures", "scripts", "ten-minute-session.json")
    texts = texts_of(fixture)
    work = tempfile.mkdtemp(prefix="bench-piper-")
    texts_file = os.path.join(work, "texts.json")
    with open(texts_file, "w") as f:
        json.dump(texts, f)

    engine = [json.loads(subprocess.run([python, "-c", ENGINE_ALONE, model, texts_file], check=True,
                                        capture_output=True, text=True).stdout) for _ in range(runs)]
    engine_seconds = median([e["seconds"] for e in engine])
    audio_seconds = engine[0]["audioSeconds"]

    def prepare(script, *extra):
        cache = tempfile.mkdtemp(prefix="cache-", dir=work)
        return timed([binary, "prepare", script, "--cache", cache, "--voice", VOICE, *extra])

    prepare_default = [prepare(fixture) for _ in range(runs)]
    prepare_1x2 = [prepare(fixture, "--jobs", "1") for _ in range(runs)]

    def one_script(name, sentences):
        path = os.path.join(work, f"{name}.json")
        segments = [{"id": f"s{i}", "phase": "p", "startSeconds": 30 * i, "text": text} for i, text in enumerate(sentences)]
        with open(path, "w") as f:
            json.dump({"id": name, "category": "bench", "title": name, "subtitle": "-", "orderIndex": 1,
                       "durationSeconds": 30 * len(sentences), "segments": segments}, f)
        return path
    sentence = "Breathe in slowly, and let the shoulders drop as you breathe out."
    one = one_script("one", [sentence])
    two = one_script("two", [sentence, sentence.replace("slowly", "gently")])
    cold = median([prepare(one, "--jobs", "1")[0] for _ in range(runs)])
    warm = median([prepare(two, "--jobs", "1")[0] for _ in range(runs)]) - cold

    batch_cache = tempfile.mkdtemp(prefix="batch-cache-", dir=work)
    batch_seconds, batch_peak = timed([binary, "batch", os.path.join(root, "Fixtures", "meditations"), "-o",
                                       os.path.join(work, "batch"), "--cache", batch_cache, "--voice", VOICE])
    batch_audio = sum(json.load(open(os.path.join(work, "batch", name)))["durationSeconds"]
                      for name in os.listdir(os.path.join(work, "batch")) if name.endswith(".timeline.json"))
    clips = len([n for n in os.listdir(batch_cache) if n.endswith(".mp3")])

    prepare_seconds = median([p[0] for p in prepare_default])
    lines = [
        f"Piper ({VOICE}), {len(texts)} texts of the 10-minute fixture, {audio_seconds:.1f} s of speech, "
        f"median of {runs} cold runs",
        "",
        "| row | wall | real-time factor | × engine alone | peak memory (process tree) |",
        "|---|---|---|---|---|",
        f"| engine-alone | {engine_seconds:.2f} s | {audio_seconds / engine_seconds:.1f}× | 1.00 | |",
        f"| prepare (2 workers × 1 thread) | {prepare_seconds:.2f} s | {audio_seconds / prepare_seconds:.1f}× | "
        f"{prepare_seconds / engine_seconds:.2f} | {median([p[1] for p in prepare_default]) / 1024:.0f} MiB |",
        f"| prepare --jobs 1 (1 worker × 2 threads) | {median([p[0] for p in prepare_1x2]):.2f} s | "
        f"{audio_seconds / median([p[0] for p in prepare_1x2]):.1f}× | "
        f"{median([p[0] for p in prepare_1x2]) / engine_seconds:.2f} | "
        f"{median([p[1] for p in prepare_1x2]) / 1024:.0f} MiB |",
        "",
        f"per clip ({len(sentence.split())} words): cold {cold * 1000:.0f} ms (worker start, model load, speech, "
        f"encoding, store), warm {warm * 1000:.0f} ms",
        f"batch of the 14 meditations, cold: {batch_seconds:.1f} s ({batch_seconds / 60:.2f} min), {clips} clips, "
        f"{batch_audio / 60:.1f} min of sessions, peak memory {batch_peak / 1024:.0f} MiB",
    ]
    checks = [
        ("prepare ≤ 1.25 × the engine alone", prepare_seconds <= 1.25 * engine_seconds),
        ("cold batch of the 14 meditations in Piper < 6 minutes", batch_seconds < 360),
    ]
    return lines, checks
