#!/bin/sh
# A program that keeps its data in git: three commits, each promised once `git commit`
# has returned ("commit 1", "commit 2", "commit 3"), then it exits at once, as a script
# or a tool that commits and quits does.
#
#   writebench crash --run 'sh "$WB_CRASH_FROM/git-commit.sh"' --check 'sh "$WB_CRASH_FROM/git-check.sh"'
#   ... --run 'sh "$WB_CRASH_FROM/git-commit.sh" fsync'    with core.fsync=all
#
# git's own output is silenced: every line on standard output is a promise.
set -e
export HOME="$PWD" GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_NAME=writebench GIT_AUTHOR_EMAIL=wb@example.org
export GIT_COMMITTER_NAME=writebench GIT_COMMITTER_EMAIL=wb@example.org
git init -q repo
cd repo
if [ "${1:-defaults}" = fsync ]; then
    git config core.fsync all
    git config core.fsyncMethod fsync
fi
# The new repository made durable before the first commit (syncfs of this filesystem
# only), so that what is checked is what the commits promise.
sync -f .
for i in 1 2 3; do
    echo "line $i" >> data.txt
    git add data.txt
    git commit -q -m "commit $i"
    echo "commit $i"
done
