#!/usr/bin/env python3
"""A real HTTP server on 127.0.0.1 that speaks both TTS protocols render-session uses, for tests.

    POST /tts/synthesize      the app backend's proxy: {"text"} -> {"success": true, "data": {"audio": base64}}
    POST /v1/audio/speech     OpenAI-compatible: {"model", "input", "voice", ...} -> MP3 bytes
    GET  /stats               what it has seen: request counts, the largest number in flight, requests

Every successful answer carries the MP3 file given with --mp3. Directives inside the text steer a
request, so that one server serves every test:
    [status=503x2]   the first 2 requests for this text get HTTP 503 (any status; 'x' count optional = always)
    [retry-after=1]  add Retry-After: 1 to such error answers
    [delay=2]        wait 2 seconds before answering
    [body=html]      answer 200 with an HTML page      [body=empty]  200 with no body
    [body=badbase64] proxy: audio that is not base64   [body=fail]   proxy: {"success": false, "error": {...}}
Hostile answers (a good answer's length is announced in each, the body then misbehaves):
    [stall-body=20]  send the head and half the body, then nothing for 20 seconds, then close
    [trickle=0.5]    send the body one byte every 0.5 seconds (for at most 60 seconds, then close)
    [close=mid-body] send the head and half the body, then close the connection (FIN)
    [reset=mid-body] send the head and half the body, then reset the connection (RST)
    [garbage=1]      answer bytes that are not HTTP at all, then close
    [redirect=URL]   answer 307 (or [redirect-status=…]) with Location URL + the request's path,
                     unless URL is this server's own
    [error-body=escape]  HTTP 400 whose JSON error message holds terminal escapes and a newline
    [error-body=huge]    HTTP 400 with a 5 MB text body

Prints the port it listens on, then serves until standard input closes.
"""
import argparse
import base64
import json
import re
import socket
import struct
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

lock = threading.Lock()
state = {"requests": [], "inFlight": 0, "maxInFlight": 0, "seen": {}}


def directives(text):
    return dict(re.findall(r"\[([a-z-]+)=([^\]]*)\]", text))


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    mp3 = b""

    def log_message(self, *args):
        pass

    def answer(self, status, body, content_type="application/json", headers=()):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path == "/stats":
            with lock:
                body = json.dumps({"count": len(state["requests"]), "maxInFlight": state["maxInFlight"],
                                   "requests": state["requests"]}).encode()
            self.answer(200, body)
        else:
            self.answer(404, b'{"error": "not found"}')

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        raw = self.rfile.read(length)
        try:
            payload = json.loads(raw)
        except ValueError:
            payload = {}
        text = payload.get("text") or payload.get("input") or ""
        with lock:
            state["requests"].append({"path": self.path, "body": payload,
                                      "headers": {k.lower(): v for k, v in self.headers.items()}})
            state["inFlight"] += 1
            state["maxInFlight"] = max(state["maxInFlight"], state["inFlight"])
            seen = state["seen"].get(text, 0)
            state["seen"][text] = seen + 1
        try:
            self.respond(text, seen)
        finally:
            with lock:
                state["inFlight"] -= 1

    def good_body(self):
        if self.path == "/tts/synthesize":
            return json.dumps({"success": True, "data": {"audio": base64.b64encode(self.mp3).decode()}}).encode(), \
                "application/json"
        return self.mp3, "audio/mpeg"

    def hostile(self, steer):
        """Answers a hostile directive; False when there is none."""
        body, content_type = self.good_body()
        half = len(body) // 2
        if "redirect" in steer:
            target = steer["redirect"].rstrip("/")
            if not target.endswith(f":{self.server.server_address[1]}"):
                status = int(steer.get("redirect-status", "307"))
                self.answer(status, b"", "text/plain", headers=[("Location", target + self.path)])
                return True
            return False
        if "garbage" in steer:
            self.wfile.write(b"SSH-2.0-OpenSSH_9.2 this is not HTTP\r\n\x00\x01\x02\r\n\r\n")
            self.wfile.flush()
            self.close_connection = True
            return True
        if "error-body" in steer:
            if steer["error-body"] == "huge":
                return self.answer(400, (b"x" * 99 + b"\n") * 50_000, "text/plain") or True
            message = "quota \x1b[2J\x1b]0;owned\x07 exceeded\nsecond line \x9b31m red"
            return self.answer(400, json.dumps({"error": {"message": message}}).encode()) or True
        if not any(k in steer for k in ("stall-body", "trickle", "close", "reset")):
            return False
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.close_connection = True
        try:
            if "trickle" in steer:
                interval, end = float(steer["trickle"]), time.monotonic() + 60
                for i in range(len(body)):
                    if time.monotonic() > end:
                        break
                    self.wfile.write(body[i:i + 1])
                    self.wfile.flush()
                    time.sleep(interval)
                return True
            self.wfile.write(body[:half])
            self.wfile.flush()
            if "stall-body" in steer:
                time.sleep(float(steer["stall-body"]))
            elif "reset" in steer:
                time.sleep(0.2)
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                self.connection.close()
        except OSError:
            pass  # the client went away
        return True

    def respond(self, text, seen):
        steer = directives(text)
        time.sleep(float(steer.get("delay", "0.05")))
        if self.hostile(steer):
            return
        if "status" in steer:
            status, _, times = steer["status"].partition("x")
            if not times or seen < int(times):
                headers = [("Retry-After", steer["retry-after"])] if "retry-after" in steer else []
                body = json.dumps({"success": False, "error": {"code": "UPSTREAM", "message": f"upstream said {status}"}})
                return self.answer(int(status), body.encode(), headers=headers)
        body = steer.get("body")
        if body == "html":
            return self.answer(200, b"<!DOCTYPE html><html><body><h1>502 Bad Gateway</h1></body></html>", "text/html")
        if body == "empty":
            return self.answer(200, b"", "audio/mpeg")
        if self.path == "/tts/synthesize":
            if body == "fail":
                reply = {"success": False, "error": {"code": "QUOTA", "message": "TTS quota exceeded"}}
            elif body == "badbase64":
                reply = {"success": True, "data": {"audio": "this is *not* base64!"}}
            else:
                reply = {"success": True, "data": {"audio": base64.b64encode(self.mp3).decode()}}
            return self.answer(200, json.dumps(reply).encode())
        if self.path == "/v1/audio/speech":
            return self.answer(200, self.mp3, "audio/mpeg")
        self.answer(404, b'{"error": {"message": "no such endpoint"}}')


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mp3", required=True)
    args = parser.parse_args()
    with open(args.mp3, "rb") as f:
        Handler.mp3 = f.read()
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    print(server.server_address[1], flush=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    sys.stdin.read()  # until the test closes our standard input (or dies)
    server.shutdown()


if __name__ == "__main__":
    main()
