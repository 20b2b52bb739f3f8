"""A minimal MCP client: spawns the server, speaks JSON-RPC 2.0 over its stdio.

One request at a time (the benchmark is sequential), so responses are read in
order; notifications and server requests are skipped (a ping is answered).
The server's stderr goes to a log file so a chatty server never blocks.
"""
import json
import os
import shutil
import subprocess
import tempfile
import time

PROTOCOL_VERSION = "2025-06-18"


class McpError(RuntimeError):
    pass


class Server:
    def __init__(self, binary, projects_dir, env_overrides, log_path, timeout=600.0, args=()):
        self.timeout = timeout
        self.home = tempfile.mkdtemp(prefix="cs-bench-home-")
        env = {k: v for k, v in os.environ.items()
               if k not in ("CLAUDE_CONFIG_DIR", "CONVERSATION_SEARCH_TOKENIZER", "CONVERSATION_SEARCH_BM25",
                            "RUST_LOG")}
        env.update({"HOME": self.home, "XDG_CACHE_HOME": os.path.join(self.home, ".cache"),
                    "XDG_CONFIG_HOME": os.path.join(self.home, ".config"),
                    "XDG_DATA_HOME": os.path.join(self.home, ".local/share"),
                    "XDG_STATE_HOME": os.path.join(self.home, ".local/state"),
                    "CONVERSATION_SEARCH_LOG": "warn"})
        env.update(env_overrides)
        self.log = open(log_path, "wb")
        self.proc = subprocess.Popen([binary, "--projects-dir", str(projects_dir), *args], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self.log, env=env)
        self.next_id = 1
        self.request("initialize", {"protocolVersion": PROTOCOL_VERSION, "capabilities": {},
                                    "clientInfo": {"name": "bench-retrieval", "version": "0"}})
        self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def _send(self, msg):
        self.proc.stdin.write((json.dumps(msg) + "\n").encode())
        self.proc.stdin.flush()

    def request(self, method, params):
        rid = self.next_id
        self.next_id += 1
        self._send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise McpError("server closed stdout while waiting for %s (exit %s)" % (method, self.proc.poll()))
            msg = json.loads(line)
            if "method" in msg:
                if "id" in msg:  # server -> client request
                    reply = {"jsonrpc": "2.0", "id": msg["id"]}
                    if msg["method"] == "ping":
                        reply["result"] = {}
                    else:
                        reply["error"] = {"code": -32601, "message": "not supported"}
                    self._send(reply)
                continue
            if msg.get("id") != rid:
                continue
            if "error" in msg:
                raise McpError("%s failed: %s" % (method, msg["error"]))
            return msg["result"]

    def call(self, tool, args):
        """Calls a tool; returns (is_error, parsed JSON payload)."""
        res = self.request("tools/call", {"name": tool, "arguments": args})
        payload = res.get("structuredContent")
        if payload is None:
            text = next((c.get("text", "") for c in res.get("content", []) if c.get("type") == "text"), "")
            try:
                payload = json.loads(text)
            except ValueError:
                payload = {"text": text}
        return bool(res.get("isError")), payload

    def wait_indexed(self, deadline_s):
        start = time.monotonic()
        while True:
            err, st = self.call("index_status", {})
            if not err and st.get("generation", 0) >= 1 and st.get("complete"):
                return st, time.monotonic() - start
            if time.monotonic() - start > deadline_s:
                raise McpError("index not complete after %.0f s: %s" % (deadline_s, st))
            time.sleep(0.2)

    def close(self):
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()
        shutil.rmtree(self.home, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
