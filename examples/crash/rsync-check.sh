#!/bin/sh
# The checker of rsync-copy.sh: every file promised is in `copy/` under its own name,
# with its checksum (copied beside it), and whole; else its first missing file (and the
# temporary name rsync left, if any) or torn file, and exit status 1.
promised=0
case "$WB_CRASH_PROMISE" in "copied "*) promised=${WB_CRASH_PROMISE#copied } ;; esac
i=1
while [ "$i" -le "$promised" ]; do
    for name in "f$i" "f$i.sum"; do
        if [ ! -e "copy/$name" ]; then
            left=$(ls -A copy 2>/dev/null | grep "^\.$name\." | head -n 1)
            echo "copy/$name missing${left:+ (left as copy/$left)}, $promised promised"
            exit 1
        fi
    done
    if [ "$(cksum "copy/f$i" | cut -d' ' -f1,2)" != "$(cat "copy/f$i.sum")" ]; then
        echo "copy/f$i torn, $promised promised"
        exit 1
    fi
    i=$((i + 1))
done
