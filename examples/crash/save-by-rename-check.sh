#!/bin/sh
# The checker of save-by-rename.sh, run by `writebench crash` in each simulated power
# loss, in the recovered filesystem: once anything is promised, `settings` must be one
# whole version (4,096 lines "save N", never missing, empty, short or mixed), and at
# least the last save promised durable. Exit 0 if so; else one line saying what was found.
set -u
# Nothing promised yet (version 0 not yet durable): nothing to judge.
[ -s "$WB_CRASH_PROMISES" ] || exit 0
if [ ! -e settings ]; then
    echo "settings was missing"
    exit 1
fi
lines=$(wc -l < settings)
bytes=$(wc -c < settings)
first=$(head -n 1 settings | tr -d '\000')
version=${first#save }
case "$version" in
    '' | *[!0-9]*)
        echo "settings was not a whole version: $bytes bytes, its first line '$first'"
        exit 1
        ;;
esac
if [ "$lines" -ne 4096 ] || [ "$(sort -u settings | wc -l)" -ne 1 ]; then
    echo "settings was not a whole version: $bytes bytes, $lines lines, starting 'save $version'"
    exit 1
fi
# The last save promised durable.
durable=$(grep ' durable$' "$WB_CRASH_PROMISES" | tail -n 1 | cut -d ' ' -f 2)
if [ -n "$durable" ] && [ "$version" -lt "$durable" ]; then
    echo "settings held save $version, save $durable was promised durable"
    exit 1
fi
exit 0
