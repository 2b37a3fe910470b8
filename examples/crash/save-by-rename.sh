#!/bin/sh
# A save by rename, as editors and configuration writers do it: the whole new content is
# written to a temporary file, which is renamed over the old one.
#
# First version 0 is written and made durable ("save 0 durable"). Then
#   sh save-by-rename.sh sync     the safe way: fsync the temporary file before the
#                                 rename and the directory after it; each save is
#                                 promised durable ("save N durable")
#   sh save-by-rename.sh nosync   neither fsync: each save is promised whole only
#                                 ("save N written"); then another file is fsynced, as
#                                 a program's next durable write would, which commits
#                                 the filesystem's journal with the renames in it
#
# Checked by save-by-rename-check.sh:
#   writebench crash --run 'sh save-by-rename.sh nosync' --check 'sh save-by-rename-check.sh'
set -eu
mode=${1:-sync}
saves=${2:-6}

# Version N: 4,096 lines "save N" (32 KiB), so that a partial file shows.
content() {
    yes "save $1" | head -n 4096
}

# Version 0, durable with its name: the first promise.
content 0 > settings
sync settings
sync .
echo "save 0 durable"

n=1
while [ "$n" -le "$saves" ]; do
    content "$n" > settings.tmp
    if [ "$mode" = sync ]; then
        sync settings.tmp
        mv settings.tmp settings
        sync .
        echo "save $n durable"
    else
        mv settings.tmp settings
        echo "save $n written"
    fi
    n=$((n + 1))
done
if [ "$mode" != sync ]; then
    echo "another file" > other
    sync other
    echo "other file synced"
fi
