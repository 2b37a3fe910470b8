#!/usr/bin/env python3
"""A program that bypasses the page cache, as databases and data tools do: a new file
written with O_DIRECT in 1 MiB calls from a page-aligned buffer (an anonymous mmap,
ordinary pages), then one fsync.

    python3 direct_writer.py [FILE] [MIB]     (default: data.bin 64)

It prints its own counts (write calls, bytes, syncs) and its rate over the loop that
writes and syncs, so that `writebench trace -- python3 direct_writer.py` can be checked
against what the program itself did (docs/trace.md).
"""

import mmap
import os
import sys
import time

CHUNK = 1 << 20


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else "data.bin"
    mib = int(sys.argv[2]) if len(sys.argv) > 2 else 64
    # O_DIRECT needs an aligned buffer: an anonymous mapping is page-aligned.
    buffer = mmap.mmap(-1, CHUNK)
    buffer.write(os.urandom(CHUNK))
    writes = syncs = written = 0
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_DIRECT, 0o644)
    try:
        start = time.perf_counter()
        for _ in range(mib):
            written += os.write(fd, buffer)
            writes += 1
        os.fsync(fd)
        syncs += 1
        seconds = time.perf_counter() - start
    finally:
        os.close(fd)
    print(f"direct_writer: {written >> 20} MiB in {writes} O_DIRECT writes of 1 MiB to {path}, then fsync: "
          f"{written / seconds / 1e9:.2f} GB/s ({seconds:.3f} s)")
    print(f"counts: writes={writes} bytes={written} syncs={syncs} seconds={seconds:.6f}")


if __name__ == "__main__":
    main()
