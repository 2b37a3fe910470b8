#!/usr/bin/env python3
"""The checker of append-log.py, run by `writebench crash` in each simulated power loss,
in the recovered filesystem: every record up to the last one promised ("record K" in
WB_CRASH_PROMISE) must be in the log, whole and in order. What follows them was never
promised: a recovery would cut a torn tail, so it is not judged."""
import os
import sys

promise = os.environ.get("WB_CRASH_PROMISE", "")
promised = int(promise.split()[1]) if promise else 0
try:
    with open("log", "rb") as f:
        data = f.read()
except FileNotFoundError:
    if promised:
        print(f"log was missing, {promised} records promised")
        sys.exit(1)
    sys.exit(0)


def record(k):
    head = f"record {k:06d} "
    return (head + "x" * (511 - len(head)) + "\n").encode()


for k in range(1, promised + 1):
    found = data[(k - 1) * 512 : k * 512]
    if found != record(k):
        if len(found) < 512:
            what = f"the log ended after {len(data):,} bytes"
        elif found.count(0) == len(found):
            what = "it held zeros"
        else:
            what = f"it held {found[:14]!r}"
        print(f"record {k} of {promised} promised was not whole: {what}")
        sys.exit(1)
