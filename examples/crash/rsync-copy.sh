#!/bin/sh
# A backup by rsync: three files copied one at a time into `copy/`, each promised once
# rsync has returned ("copied 1", "copied 2", "copied 3").
#
#   writebench crash --run 'sh "$WB_CRASH_FROM/rsync-copy.sh"' --check 'sh "$WB_CRASH_FROM/rsync-check.sh"'
#   ... 'sh "$WB_CRASH_FROM/rsync-copy.sh" fsync'     with rsync --fsync
#
# rsync writes each file under a temporary name (.f1.XXXXXX), then renames it.
set -e
sync=""
[ "${1:-plain}" = fsync ] && sync=--fsync
mkdir -p source copy
sync -f .
for i in 1 2 3; do
    head -c 65536 /dev/urandom > source/f$i
    cksum source/f$i | cut -d' ' -f1,2 > source/f$i.sum
    rsync $sync source/f$i source/f$i.sum copy/
    echo "copied $i"
done
