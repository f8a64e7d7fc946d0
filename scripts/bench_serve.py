"""The service's rows of the benchmark (docs/performance.md, docs/serve.md): `render-session serve`
on 127.0.0.1 with the bench's clip cache, offline, measured by clients we did not write.

  ttfb-existing  curl's time to first byte of a 10-minute WAV already rendered (GET), median of 20
  post-existing  curl's time for POST /v1/renders of a request already rendered (200), median of 20
  load           wrk, 2 threads, 50 connections, 30 s: POST /v1/renders, each request a new seed of
                 the 10-minute fixture as WAV (a new render each, or a 503 when every slot and queue
                 place is taken: the documented answer), then the same with every request the same
                 (one render, then 200s); requests/s, p50/p99 latency, statuses, and the server's
                 peak memory (VmHWM) over both
Checks: no status but 200, 201 and 503; no socket error; the server exits 0 on SIGTERM.
"""
import json
import os
import re
import signal
import socket
import statistics
import subprocess
import time
import urllib.request

LOAD_SECONDS = int(os.environ.get("BENCH_SERVE_SECONDS", "30"))

# Each request of the first run a new seed (a new render); wrk's Lua counts every status.
WRK_SCRIPT = r"""
local counter = 0
statuses = {}
local threads = {}
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
local script = io.open(os.getenv("BENCH_SERVE_SCRIPT")):read("*a")
local vary = os.getenv("BENCH_SERVE_VARY") == "1"
function setup(thread)
  thread:set("id", #threads)
  table.insert(threads, thread)
end
function init(args)
  statuses = {}
end
function request()
  counter = counter + 1
  local seed = vary and (id * 1000000 + counter) or 7
  return wrk.format(nil, "/v1/renders", nil,
    '{"script": ' .. script .. ', "options": {"format": "wav", "seed": ' .. seed .. '}}')
end
function response(status, headers, body)
  statuses[status] = (statuses[status] or 0) + 1
end
function done(summary, latency, requests)
  local merged = {}
  for _, thread in ipairs(threads) do
    local counts = thread:get("statuses")
    for status, count in pairs(counts) do merged[status] = (merged[status] or 0) + count end
  end
  local parts = {}
  for status, count in pairs(merged) do table.insert(parts, '"' .. status .. '": ' .. count) end
  io.write("STATUSES {" .. table.concat(parts, ", ") .. "}\n")
  io.write(string.format("LATENCY %d %d %d\n", latency:percentile(50), latency:percentile(99), latency.max))
  io.write(string.format("TOTAL %d %d %d %d %d\n", summary.requests, summary.duration,
    summary.errors.connect + summary.errors.read + summary.errors.write, summary.errors.timeout,
    summary.errors.status))
end
"""


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def peak_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def curl_seconds(args, field):
    out = subprocess.run(["curl", "-s", "-o", "/dev/null", "-w", f"%{{{field}}}"] + args,
                         check=True, capture_output=True, text=True).stdout
    return float(out)


def wrk_run(base, work, script, vary):
    lua = os.path.join(work, "serve-load.lua")
    with open(lua, "w") as f:
        f.write(WRK_SCRIPT)
    env = dict(os.environ, BENCH_SERVE_SCRIPT=script, BENCH_SERVE_VARY="1" if vary else "0")
    out = subprocess.run(["wrk", "-t", "2", "-c", "50", "-d", f"{LOAD_SECONDS}s", "--timeout", "60s", "-s", lua,
                          f"{base}/v1/renders"], check=True, capture_output=True, text=True, env=env).stdout
    statuses = json.loads(re.search(r"STATUSES (\{.*\})", out).group(1) or "{}")
    p50, p99, worst = (int(x) for x in re.search(r"LATENCY (\d+) (\d+) (\d+)", out).group(1, 2, 3))
    requests, duration, socket_errors, timeouts, _ = (int(x) for x in re.search(r"TOTAL (\d+) (\d+) (\d+) (\d+) (\d+)", out).groups())
    return {"statuses": {int(k): v for k, v in statuses.items()}, "p50_ms": p50 / 1000, "p99_ms": p99 / 1000,
            "max_ms": worst / 1000, "requests": requests, "per_second": requests / (duration / 1e6),
            "socket_errors": socket_errors, "timeouts": timeouts}


def serve_rows(binary, work, cache, bell, script):
    """Runs the service rows; returns the table's lines and the checks, (text, passed) each."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    out = os.path.join(work, "serve-out")
    subprocess.run(["rm", "-rf", out], check=True)
    server = subprocess.Popen([binary, "serve", "--port", str(port), "--cache", cache, "--bell", bell, "--offline",
                               "--out", out, "--max-renders", "2"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            try:
                urllib.request.urlopen(f"{base}/livez", timeout=1)
                break
            except OSError:
                time.sleep(0.1)
        with open(script) as f:
            script_text = json.dumps(json.load(f))
        body = os.path.join(work, "serve-request.json")
        with open(body, "w") as f:
            f.write('{"script": %s, "options": {"format": "wav", "seed": 7}}' % script_text)
        post = ["-X", "POST", "--data-binary", f"@{body}", f"{base}/v1/renders"]
        first = json.loads(subprocess.run(["curl", "-s"] + post, check=True, capture_output=True, text=True).stdout)
        audio = base + first["audio"]
        ttfb = statistics.median(curl_seconds([audio], "time_starttransfer") for _ in range(20)) * 1000
        existing = statistics.median(curl_seconds(post, "time_total") for _ in range(20)) * 1000
        compact = os.path.join(work, "serve-script.json")
        with open(compact, "w") as f:
            f.write(script_text)
        distinct = wrk_run(base, work, compact, vary=True)
        same = wrk_run(base, work, compact, vary=False)
        peak = peak_kib(server.pid) / 1024
    finally:
        server.send_signal(signal.SIGTERM)
        exit_status = server.wait(timeout=60)

    def row(name, run):
        statuses = ", ".join(f"{k}: {v}" for k, v in sorted(run["statuses"].items()))
        return (f"| {name} | {run['per_second']:.1f} | {run['p50_ms']:.0f} ms | {run['p99_ms']:.0f} ms | "
                f"{run['max_ms']:.0f} ms | {statuses} | {run['socket_errors']} |")

    lines = [
        f"| serve | time to first byte, GET of a rendered 10-minute WAV | {ttfb:.1f} ms |",
        f"| serve | POST of a request already rendered (200) | {existing:.1f} ms |",
        "",
        f"| load (wrk -t2 -c50 -d{LOAD_SECONDS}s) | requests/s | p50 | p99 | max | statuses | socket errors |",
        "|---|---|---|---|---|---|---|",
        row("a new render each (new seeds)", distinct),
        row("the same request each", same),
        "",
        f"server peak memory over both: {peak:.1f} MiB",
    ]
    allowed = {200, 201, 503}
    checks = [
        ("serve: no status but 200, 201 and 503 under load",
         all(set(run["statuses"]) <= allowed for run in (distinct, same))),
        ("serve: no socket error or timeout under load",
         all(run["socket_errors"] == 0 and run["timeouts"] == 0 for run in (distinct, same))),
        ("serve: SIGTERM ends the server with exit status 0", exit_status == 0),
    ]
    return lines, checks
