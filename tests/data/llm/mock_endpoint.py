#!/usr/bin/env python3
"""A mock OpenAI-compatible chat-completion endpoint that replays a scripted conversation (Python 3 stdlib only).

It serves, on 127.0.0.1 only, POST <base>/chat/completions and GET <base>/models for kopt's tests and the device
check (scripts/device/llm_check.sh), and stops by itself after --max-seconds or --max-requests, or on
POST /shutdown.

    python3 mock_endpoint.py --script conversation.json --port-file port.txt [--log requests.jsonl]

The script (JSON):
  {"key": "sk-...",                  optional: the Bearer key every request must carry (else 401, echoing the
                                      key that came, as some providers do, so that kopt's redaction is tested)
   "models": ["m1"],                  optional: served models (an unknown one: 404 naming it)
   "rules": [                         the first rule that matches the request and has uses left answers it
     {"match": ["candidate 1 of"],    substrings that must all be in the last user message
      "times": 1,                     optional: how many requests the rule answers (default: any number)
      "delay_s": 0.2,                 optional: wait before answering
      "status": 429, "headers": {"Retry-After": "0"},   optional: an HTTP error instead of a reply
      "body": "raw text",             optional: the raw body to send (for malformed answers)
      "reply": {"content": "...",     the assistant's message, or "parts": a list of
                "parts": [{"text": "..."}, {"code_file": "v.cu", "info": "cuda file=v1.cu"},
                          {"code": "...", "info": "..."}, {"manifest": {"candidates": [...]}}],
                "usage": {"prompt_tokens": 1200, "completion_tokens": 300}, "finish_reason": "stop"}}]}
Files named by code_file are relative to the script. A request no rule matches gets HTTP 400 saying so.

The log has one JSON line per request: path, model, messages (count), last_user (first 4000 characters), the
rule index, the status, auth_ok, and in_flight (requests being answered at that moment, this one included).
"""
import argparse
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class State:
    def __init__(self, script, script_dir, log_path, max_requests):
        self.script = script
        self.script_dir = script_dir
        self.log_path = log_path
        self.max_requests = max_requests
        self.lock = threading.Lock()
        self.uses = [0] * len(script.get("rules", []))
        self.requests = 0
        self.in_flight = 0

    def log(self, entry):
        if not self.log_path:
            return
        with self.lock:
            with open(self.log_path, "a", encoding="utf-8") as f:
                f.write(json.dumps(entry) + "\n")

    def pick_rule(self, last_user):
        with self.lock:
            for i, rule in enumerate(self.script.get("rules", [])):
                if not all(m in last_user for m in rule.get("match", [])):
                    continue
                times = rule.get("times")
                if times is not None and self.uses[i] >= times:
                    continue
                self.uses[i] += 1
                return i, rule
        return None, None

    def content(self, reply):
        if "content" in reply:
            return reply["content"]
        out = []
        for part in reply.get("parts", []):
            if "text" in part:
                out.append(part["text"])
            elif "code_file" in part or "code" in part:
                if "code_file" in part:
                    with open(os.path.join(self.script_dir, part["code_file"]), encoding="utf-8") as f:
                        code = f.read()
                else:
                    code = part["code"]
                if not code.endswith("\n"):
                    code += "\n"
                out.append("```" + part.get("info", "") + "\n" + code + "```")
            elif "manifest" in part:
                out.append("```json\n" + json.dumps(part["manifest"], indent=2) + "\n```")
        return "\n\n".join(out)


def make_handler(state, server_ref):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, fmt, *args):  # quiet: the JSON log is the record
            pass

        def send(self, status, body, headers=None):
            data = body.encode("utf-8") if isinstance(body, str) else body
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for k, v in (headers or {}).items():
                self.send_header(k, str(v))
            self.end_headers()
            try:
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (its timeout): nothing to do

        def auth_ok(self):
            want = state.script.get("key")
            got = self.headers.get("Authorization", "")
            return want is None or got == "Bearer " + want

        def refuse_key(self):
            got = self.headers.get("Authorization", "")[len("Bearer "):]
            self.send(401, json.dumps({"error": {"message": "Incorrect API key provided: %s" % got,
                                                 "type": "invalid_request_error", "code": "invalid_api_key"}}))

        def count(self):
            with state.lock:
                state.requests += 1
                over = state.requests > state.max_requests
            if over:
                threading.Thread(target=server_ref[0].shutdown, daemon=True).start()
            return not over

        def do_GET(self):
            if not self.count():
                return self.send(503, '{"error": "mock: too many requests"}')
            if self.path.rstrip("/") != "/v1/models":  # served under /v1, as OpenAI-compatible servers do
                return self.send(404, '{"error": "not found"}')
            ok = self.auth_ok()
            state.log({"path": self.path, "method": "GET", "auth_ok": ok})
            if not ok:
                return self.refuse_key()
            models = state.script.get("models", ["mock-model"])
            self.send(200, json.dumps({"object": "list", "data": [{"id": m, "object": "model"} for m in models]}))

        def do_POST(self):
            length = int(self.headers.get("Content-Length", "0"))
            raw = self.rfile.read(length) if length else b""
            if self.path == "/shutdown":
                self.send(200, "{}")
                threading.Thread(target=server_ref[0].shutdown, daemon=True).start()
                return
            if not self.count():
                return self.send(503, '{"error": "mock: too many requests"}')
            if self.path != "/v1/chat/completions":
                state.log({"path": self.path, "method": "POST", "status": 404})
                return self.send(404, '{"error": {"message": "Not Found"}}')
            with state.lock:
                state.in_flight += 1
                in_flight = state.in_flight
            try:
                self.answer(raw, in_flight)
            finally:
                with state.lock:
                    state.in_flight -= 1

        def answer(self, raw, in_flight):
            ok = self.auth_ok()
            try:
                req = json.loads(raw)
            except ValueError:
                return self.send(400, '{"error": {"message": "mock: the request is not JSON"}}')
            messages = req.get("messages", [])
            last_user = next((m.get("content", "") for m in reversed(messages) if m.get("role") == "user"), "")
            entry = {"path": self.path, "method": "POST", "model": req.get("model"), "messages": len(messages),
                     "roles": [m.get("role") for m in messages], "last_user": last_user[:4000],
                     "temperature": req.get("temperature"), "max_tokens": req.get("max_tokens"),
                     "auth_ok": ok, "in_flight": in_flight}
            if not ok:
                entry["status"] = 401
                state.log(entry)
                return self.refuse_key()
            models = state.script.get("models")
            if models is not None and req.get("model") not in models:
                entry["status"] = 404
                state.log(entry)
                return self.send(404, json.dumps({"error": {"message": "The model `%s` does not exist" % req.get("model"),
                                                            "type": "invalid_request_error", "code": "model_not_found"}}))
            index, rule = state.pick_rule(last_user)
            entry["rule"] = index
            if rule is None:
                entry["status"] = 400
                state.log(entry)
                return self.send(400, '{"error": {"message": "mock: no rule for this request"}}')
            if rule.get("delay_s"):
                time.sleep(rule["delay_s"])
            status = rule.get("status", 200)
            entry["status"] = status
            state.log(entry)
            if "body" in rule:
                return self.send(status, rule["body"], rule.get("headers"))
            if status != 200:
                return self.send(status, json.dumps({"error": {"message": "mock: HTTP %d" % status}}), rule.get("headers"))
            reply = rule.get("reply", {})
            body = {"id": "chatcmpl-mock-%d" % state.requests, "object": "chat.completion", "created": int(time.time()),
                    "model": req.get("model"),
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": state.content(reply)},
                                 "finish_reason": reply.get("finish_reason", "stop")}]}
            if reply.get("usage") is not False:
                body["usage"] = reply.get("usage", {"prompt_tokens": len(raw) // 4, "completion_tokens": 100})
                body["usage"]["total_tokens"] = body["usage"]["prompt_tokens"] + body["usage"]["completion_tokens"]
            self.send(200, json.dumps(body), rule.get("headers"))

    return Handler


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--script", required=True)
    p.add_argument("--port", type=int, default=0, help="0: any free port (written to --port-file)")
    p.add_argument("--port-file", required=True)
    p.add_argument("--log", default="")
    p.add_argument("--max-seconds", type=float, default=120)
    p.add_argument("--max-requests", type=int, default=500)
    a = p.parse_args(argv)
    with open(a.script, encoding="utf-8") as f:
        script = json.load(f)
    state = State(script, os.path.dirname(os.path.abspath(a.script)), a.log, a.max_requests)
    server_ref = [None]
    server = ThreadingHTTPServer(("127.0.0.1", a.port), make_handler(state, server_ref))
    server.daemon_threads = True
    server_ref[0] = server
    timer = threading.Timer(a.max_seconds, server.shutdown)
    timer.daemon = True
    timer.start()
    tmp = a.port_file + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(str(server.server_address[1]))
    os.replace(tmp, a.port_file)
    server.serve_forever(poll_interval=0.1)
    server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
