"""The `word_count` script op: reads {"text": ...} as JSON on stdin, prints
{"words": N, "lines": N} as JSON on stdout."""
import json
import sys

payload = json.load(sys.stdin)
text = payload["text"]
json.dump({"words": len(text.split()), "lines": len(text.splitlines())}, sys.stdout)
