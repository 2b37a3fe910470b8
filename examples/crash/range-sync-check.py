#!/usr/bin/env python3
"""The checker of range-sync.py, run by `writebench crash` in each simulated power loss,
in the recovered filesystem: once "checkpoint committed" was said, the commit record must
be there and every page of the checkpoint new. Before it, nothing was promised.

    python3 range-sync-check.py [PAGES]      (the PAGES range-sync.py was given)
"""
import os
import sys

PAGES = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
PAGE = 4096

if not os.environ.get("WB_CRASH_PROMISE"):
    sys.exit(0)
with open("commit", "rb") as f:
    record = f.read()
if record != b"checkpoint":
    print(f"the commit record was lost (the file held {record[:16]!r})")
    sys.exit(1)
with open("data", "rb") as f:
    data = f.read()
new = sum(1 for page in range(PAGES) if data[2 * page * PAGE : (2 * page + 1) * PAGE] == b"n" * PAGE)
if new != PAGES:
    print(f"the checkpoint was committed, but {new} of its {PAGES} pages were written")
    sys.exit(1)
