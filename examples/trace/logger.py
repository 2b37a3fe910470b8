#!/usr/bin/env python3
"""A logger as many programs have one: each record (300 bytes, a line) is appended to a
file and made durable with fsync before the next is written.

    python3 logger.py [FILE] [RECORDS]     (default: app.log 500)

It prints its own counts (write calls, bytes, syncs) and its rate over the loop that
writes and syncs, so that `writebench trace -- python3 logger.py` can be checked
against what the program itself did (docs/trace.md).
"""

import os
import sys
import time

RECORD = 300


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else "app.log"
    records = int(sys.argv[2]) if len(sys.argv) > 2 else 500
    writes = syncs = written = 0
    # Binary, buffered: each flush is one write call of the whole record.
    with open(path, "ab") as log:
        start = time.perf_counter()
        for i in range(records):
            line = f"{i:010d} event=request status=200 ".encode()
            record = line + b"x" * (RECORD - len(line) - 1) + b"\n"
            log.write(record)
            log.flush()
            writes += 1
            written += len(record)
            os.fsync(log.fileno())
            syncs += 1
        seconds = time.perf_counter() - start
    print(f"logger: {records} records of {RECORD} B appended to {path}, each followed by fsync: "
          f"{records / seconds:,.0f} records/s ({seconds:.3f} s)")
    print(f"counts: writes={writes} bytes={written} syncs={syncs} seconds={seconds:.6f}")


if __name__ == "__main__":
    main()
