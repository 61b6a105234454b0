#!/usr/bin/env python3
"""Prints the --filter regular expression that selects the tests tagged .realTime.

Input: the test list (`--list-tests`, one test ID a line) and the Swift Testing event stream
of that listing (`--experimental-event-stream-output`, with the experimental fields that carry
each test's own tags). A test is real-time when it is tagged or a suite that holds it is.
Fails when nothing is tagged: the tags could not be read.
"""
import json
import re
import sys

stream_path, list_path = sys.argv[1], sys.argv[2]
tagged = []
with open(stream_path) as stream:
    for line in stream:
        record = json.loads(line)
        payload = record.get("payload", {})
        if record.get("kind") == "test" and ".realTime" in payload.get("_tags", []):
            # IDs of functions end in /File.swift:line:column; the listing has none.
            test_id = payload["id"]
            if payload.get("kind") == "function":
                test_id = test_id.rsplit("/", 1)[0]
            tagged.append(test_id)
if not tagged:
    sys.exit("realtime-tests.py: no test is tagged .realTime in the event stream (were its tags read?)")
with open(list_path) as listing:
    tests = [t for t in listing.read().split("\n") if t]
selected = [t for t in tests if any(t == p or t.startswith(p + "/") or t.startswith(p + ".") for p in tagged)]
# Matched against "ID/File.swift:line:column" for a function.
print("|".join("^" + re.escape(t) + "(/|$)" for t in sorted(selected)))
print(f"realtime-tests.py: {len(selected)} of {len(tests)} tests are real-time", file=sys.stderr)
