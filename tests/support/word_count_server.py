"""An HTTP endpoint for the `runtime = "http"` op test: POST /word_count with
{"text": ...} answers {"words": N, "lines": N}; other paths answer 404. Serves on
127.0.0.1:PORT (the first argument) and prints `ready` once listening."""
import json
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if self.path != "/word_count":
            self.send_response(404)
            self.end_headers()
            self.wfile.write(b"no such endpoint")
            return
        text = json.loads(body)["text"]
        answer = json.dumps({"words": len(text.split()), "lines": len(text.splitlines())}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, *args):
        pass


server = HTTPServer(("127.0.0.1", int(sys.argv[1])), Handler)
print("ready", flush=True)
server.serve_forever()
