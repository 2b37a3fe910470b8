#!/usr/bin/env python3
"""The checker of sqlite-commit.py, run by `writebench crash` in each simulated power
loss, in the recovered filesystem, as the application would start after it: SQLite
opens app.db (rolling back a hot journal or replaying its WAL), `PRAGMA integrity_check`
must say ok, the rows must be 1..N with their payloads, and N at least the last row
promised (WB_CRASH_PROMISE: "row K"). Exit 0 if so; else one line saying what was found."""
import os
import sqlite3
import sys

promise = os.environ.get("WB_CRASH_PROMISE", "")
promised = int(promise.split()[1]) if promise else 0


# A rollback journal left behind is "hot": SQLite rolls the last transaction back on open.
journal = os.path.getsize("app.db-journal") if os.path.exists("app.db-journal") else 0
hot = f" (app.db-journal, {journal:,} bytes, was there to roll back)" if journal else ""


def fail(words):
    print(words + hot)
    sys.exit(1)


if not os.path.exists("app.db"):
    if promised:
        fail(f"app.db was missing: 0 rows, {promised} promised")
    sys.exit(0)
try:
    db = sqlite3.connect("app.db")
    verdict = db.execute("PRAGMA integrity_check").fetchall()
    if verdict != [("ok",)]:
        fail(f"integrity_check: {verdict[0][0]}")
    tables = [t for (t,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    if "rows" not in tables:
        if promised:
            fail(f"no table: 0 rows, {promised} promised")
        sys.exit(0)
    found = db.execute("SELECT id, payload FROM rows ORDER BY id").fetchall()
except sqlite3.DatabaseError as error:
    fail(f"SQLite could not read app.db: {error}")
for k, (id, payload) in enumerate(found, start=1):
    if id != k or payload != f"row {k} " + "x" * 3000:
        fail(f"row {k} was wrong: id {id}, payload starting {payload[:12]!r}")
if len(found) < promised:
    fail(f"{len(found)} rows, {promised} promised")
