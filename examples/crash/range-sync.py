#!/usr/bin/env python3
"""A checkpoint that takes writeback for durability: a database's pages, scattered over its
data file, are written, their writeback is started by sync_file_range(SYNC_FILE_RANGE_WRITE)
in a background thread (PostgreSQL's checkpoint_flush_after and RocksDB's bytes_per_sync
start writeback early this way, then sync properly), and the checkpoint is committed by
writing a record to another file and fdatasync'ing that file alone. "checkpoint
committed" is said then, as if the pages were on the device too.

They need not be: sync_file_range waits for nothing a power loss respects, and a flush
covers only what the device has been given. On a fast device the pages happen to be
written before the commit's flush; on a slow one the commit passes them.

    python3 range-sync.py [PAGES]      (default 2000 pages of 4 KiB, every other page)

Checked by range-sync-check.py (with the same PAGES):
    writebench crash --run 'python3 range-sync.py' --check 'python3 range-sync-check.py' --device slow
"""
import ctypes
import os
import sys
import threading
import time

PAGES = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
PAGE = 4096
SYNC_FILE_RANGE_WRITE = 2  # <linux/fs.h>: start writeback of the dirty pages, wait for none

libc = ctypes.CDLL(None, use_errno=True)
libc.sync_file_range.argtypes = [ctypes.c_int, ctypes.c_longlong, ctypes.c_longlong, ctypes.c_uint]


def start_writeback(fd):
    if libc.sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE) != 0:
        sys.exit(f"sync_file_range: {os.strerror(ctypes.get_errno())}")


# The old pages and both files' names, durable before anything is promised.
data = os.open("data", os.O_RDWR | os.O_CREAT, 0o644)
os.pwrite(data, b"o" * (2 * PAGES * PAGE), 0)
os.fsync(data)
commit = os.open("commit", os.O_WRONLY | os.O_CREAT, 0o644)
os.fsync(commit)
directory = os.open(".", os.O_RDONLY)
os.fsync(directory)
os.close(directory)

# The checkpoint's new pages, every other page of the file: each one write for the
# device, none merged with the next.
for page in range(PAGES):
    os.pwrite(data, b"n" * PAGE, 2 * page * PAGE)
writeback = threading.Thread(target=start_writeback, args=(data,))
writeback.start()
# A second for the writeback: more than a fast device needs for 2000 pages.
time.sleep(1)
os.pwrite(commit, b"checkpoint", 0)
os.fdatasync(commit)
print("checkpoint committed", flush=True)
writeback.join()
