#!/usr/bin/env python3
"""A program that commits one row at a time to SQLite and says "row K" once commit K
returned, as an application that acknowledges each write to its user.

    python3 sqlite-commit.py JOURNAL SYNCHRONOUS [ROWS]
    JOURNAL: delete (the rollback journal, SQLite's default) or wal
    SYNCHRONOUS: off, normal, full or extra (PRAGMA synchronous)

Checked by sqlite-check.py:
    writebench crash --run 'python3 sqlite-commit.py wal full' --check 'python3 sqlite-check.py'
"""
import sqlite3
import sys

journal, synchronous = sys.argv[1], sys.argv[2]
rows = int(sys.argv[3]) if len(sys.argv) > 3 else 16

db = sqlite3.connect("app.db", isolation_level=None)
db.execute(f"PRAGMA journal_mode={journal}")
db.execute(f"PRAGMA synchronous={synchronous}")
db.execute("CREATE TABLE rows (id INTEGER PRIMARY KEY, payload TEXT NOT NULL)")
for k in range(1, rows + 1):
    db.execute("BEGIN")
    # 3,000 bytes a row: each commit changes a page or two of its own.
    db.execute("INSERT INTO rows VALUES (?, ?)", (k, f"row {k} " + "x" * 3000))
    db.execute("COMMIT")
    print(f"row {k}", flush=True)
db.close()
