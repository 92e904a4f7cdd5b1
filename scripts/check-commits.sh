#!/usr/bin/env bash
# Checks the messages of the commits made since the rule in CONTRIBUTING.md was adopted (the commit
# that added CONTRIBUTING.md): a subject of at most 72 characters, not ending in a period; then a
# blank line and a body saying why. Run by .ci/run before the tests; exits 1 naming each commit
# that breaks the rule.
#
#   scripts/check-commits.sh [<repo dir>]     (default: this repository)
set -euo pipefail

repo="${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
cd "$repo"

if [[ "$(git rev-parse --is-shallow-repository 2>/dev/null)" == true ]]; then
  echo "check-commits: a shallow clone: checking only the commits it holds" >&2
fi
base="$(git log --diff-filter=A --format=%H -- CONTRIBUTING.md | tail -n 1)"
if [[ -z "$base" ]]; then
  echo "check-commits: no commit adds CONTRIBUTING.md: nothing to check"
  exit 0
fi

bad=0
count=0
while read -r sha; do
  count=$((count + 1))
  subject="$(git log -1 --format=%s "$sha")"
  second="$(git log -1 --format=%B "$sha" | sed -n 2p)"
  body="$(git log -1 --format=%b "$sha" | tr -d '[:space:]')"
  why=()
  ((${#subject} <= 72)) || why+=("subject is ${#subject} characters (at most 72)")
  [[ "$subject" != *. ]] || why+=("subject ends with a period")
  [[ -z "$second" ]] || why+=("no blank line after the subject")
  [[ -n "$body" ]] || why+=("no body saying why")
  if ((${#why[@]})); then
    bad=$((bad + 1))
    printf 'check-commits: %s "%s": %s\n' "${sha:0:10}" "${subject:0:80}" "$(IFS=';'; echo "${why[*]}")" >&2
  fi
done < <(git rev-list --no-merges "$base..HEAD")

if ((bad)); then
  echo "check-commits: $bad of $count commits since CONTRIBUTING.md break its rule for messages" >&2
  exit 1
fi
echo "check-commits: $count commits since CONTRIBUTING.md, every message as CONTRIBUTING.md asks"
