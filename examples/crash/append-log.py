#!/usr/bin/env python3
"""An append-only log, as a message queue or a database's write-ahead log keeps one:
records of 512 bytes appended one by one, fdatasync after every N, and "record K" said
once record K is durable (K = N, 2N, …).

    python3 append-log.py [RECORDS] [N]      (default: 48 records, fdatasync every 4)

Checked by append-log-check.py:
    writebench crash --run 'python3 append-log.py' --check 'python3 append-log-check.py'
"""
import os
import sys

records = int(sys.argv[1]) if len(sys.argv) > 1 else 48
every = int(sys.argv[2]) if len(sys.argv) > 2 else 4


def record(k):
    """Record k: its number, then filler, 512 bytes with the newline."""
    head = f"record {k:06d} "
    return (head + "x" * (511 - len(head)) + "\n").encode()


# The log's name is made durable before anything is promised about its content.
fd = os.open("log", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
directory = os.open(".", os.O_RDONLY)
os.fsync(directory)
os.close(directory)

for k in range(1, records + 1):
    os.write(fd, record(k))
    if k % every == 0:
        os.fdatasync(fd)
        print(f"record {k}", flush=True)
os.close(fd)
