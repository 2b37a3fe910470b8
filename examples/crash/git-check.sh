#!/bin/sh
# The checker of git-commit.sh, in each crash state: the repository must be whole (`git
# fsck`; else its first complaint and exit status 2: corrupt) and hold every commit
# promised (the last promise, "commit N"; else exit status 1: a lost promise). Nothing
# is judged before the first promise.
export HOME="$PWD" GIT_CONFIG_NOSYSTEM=1
promised=0
case "$WB_CRASH_PROMISE" in "commit "*) promised=${WB_CRASH_PROMISE#commit } ;; esac
[ "$promised" -eq 0 ] && exit 0
if [ ! -d repo/.git ]; then
    echo "no repository, $promised commits promised"
    exit 1
fi
cd repo
if ! complaint=$(git fsck --no-progress 2>&1); then
    echo "$complaint" | head -n 1
    exit 2
fi
found=$(git rev-list --count HEAD 2>/dev/null || echo 0)
if [ "$found" -lt "$promised" ]; then
    echo "$found commits, $promised promised"
    exit 1
fi
