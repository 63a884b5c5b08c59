#!/bin/sh
# Writes the commit the image is built from (image.commit) and its commit time in UTC (image.created)
# as Maven properties: the OCI revision/created labels and Jib's creationTime come from the commit,
# not the clock, so the same commit gives the same image digest. git runs in the checkout itself
# (git-commit-id-maven-plugin's JGit resolved a `git worktree` to the main checkout's HEAD).
# Usage: commit-properties.sh OUT_FILE
set -eu
out=$1
mkdir -p "$(dirname "$out")"
commit=$(git rev-parse HEAD)
created=$(TZ=UTC git log -1 --date=format-local:%Y-%m-%dT%H:%M:%SZ --format=%cd HEAD)
# uncommitted changes: say so in the revision label instead of claiming the commit
if [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]; then commit="$commit-dirty"; fi
printf 'image.commit=%s\nimage.created=%s\n' "$commit" "$created" >"$out"
