#!/usr/bin/env bash
# The project's test command (`npm test`):
#   1. system packages for the librdkafka mock broker (devnet/kafka-mock.ts), Chromium for the
#      browser tests (test/e2e/dashboard.test.ts) and tmux for the terminal test
#      (test/integration/operator.test.ts): installed with apt-get when missing and we are root (or
#      have password-less sudo); otherwise a warning, and those suites skip themselves by name;
#   2. `npm ci` when node_modules is missing or older than package-lock.json;
#   3. the BI tools' database drivers for test/integration/bi-drivers.test.ts
#      (scripts/install-drivers.sh: Python venv, Go binary, Maven build; quick once built);
#   4. the compiled CLI (scripts/build.mjs) when dist/ is missing or older than a source file, so the
#      tests that run bin/vaultstream.mjs run the compiled CLI;
#   5. typecheck (tsc), lint (biome), then the tests (vitest).
# Every step runs even when an earlier check failed, so one run shows every problem. The exit
# status is vitest's when the tests fail, else 1 when the build, typecheck or lint failed, else 0.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

APT_PACKAGES=(librdkafka-dev gcc libc6-dev chromium tmux)

section() { printf '\n==> %s\n' "$*"; }
warn() { printf 'WARNING: %s\n' "$*" >&2; }

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# ---- 1. system packages -----------------------------------------------------------------------
missing_apt_packages() {
  local pkg
  for pkg in "${APT_PACKAGES[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed'; then
      printf '%s\n' "$pkg"
    fi
  done
}

ensure_apt_packages() {
  section "system packages: ${APT_PACKAGES[*]}"
  if ! command -v dpkg-query >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1; then
    warn "not a Debian-like system (no dpkg-query/apt-get): cannot check ${APT_PACKAGES[*]};" \
      "the Kafka mock-broker and browser tests will skip themselves if they cannot run"
    return 0
  fi
  local missing=()
  mapfile -t missing < <(missing_apt_packages)
  if ((${#missing[@]} == 0)); then
    echo "all present"
    return 0
  fi
  local as_root=()
  if [[ "$(id -u)" != 0 ]]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
      as_root=(sudo -n)
    else
      warn "missing ${missing[*]} and not root (no password-less sudo): not installing them;" \
        "the Kafka mock-broker and browser tests will skip themselves"
      return 0
    fi
  fi
  echo "installing: ${missing[*]} (log: apt-get output shown only on failure)"
  if "${as_root[@]}" apt-get update >"$tmp/apt.log" 2>&1 &&
    "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive \
      apt-get install -y --no-install-recommends "${missing[@]}" >>"$tmp/apt.log" 2>&1; then
    echo "installed"
  else
    tail -n 20 "$tmp/apt.log" >&2 || true
    warn "could not install ${missing[*]}; the Kafka mock-broker and browser tests will skip themselves"
  fi
}

# ---- 2. node dependencies -----------------------------------------------------------------------
ensure_node_modules() {
  section "node dependencies"
  # npm writes node_modules/.package-lock.json at the end of every install: its age is the age of
  # node_modules as a whole (the directory's own mtime changes only when a top-level entry does).
  local stamp=node_modules/.package-lock.json
  if [[ ! -d node_modules ]]; then
    echo "node_modules missing: npm ci"
  elif [[ ! -e "$stamp" ]]; then
    echo "node_modules has no install record: npm ci"
  elif [[ package-lock.json -nt "$stamp" ]]; then
    echo "package-lock.json is newer than node_modules: npm ci"
  else
    echo "node_modules up to date"
    return 0
  fi
  # package-lock.json lists other platforms' optional binaries (kept by npm install/uninstall),
  # so npm ci accepts it here and skips them.
  npm ci --no-audit --no-fund 2>&1 | grep -v 'Unknown user config' | tail -n 5
}

ensure_apt_packages
ensure_node_modules

# ---- Kafka broker jars --------------------------------------------------------------------------
# Apache Kafka 3.9.1 from Maven Central (scripts/install-kafka.sh; cached, a few ms once done) for
# the real-broker suites (test/integration/kafka-real*.test.ts); without java or mvn they skip by name.
section "kafka broker: scripts/install-kafka.sh"
if kafka_home="$(bash scripts/install-kafka.sh)"; then
  echo "Kafka broker jars in $kafka_home/lib"
else
  warn "could not install the Kafka broker jars; the real-broker suites will skip themselves"
fi

# ---- 3. database drivers ---------------------------------------------------------------------
# The drivers' suite fails (never skips) when they are missing, so a failed install shows up there.
section "database drivers: scripts/install-drivers.sh"
bash scripts/install-drivers.sh || warn "could not install the database drivers; test/integration/bi-drivers.test.ts will fail"

# ---- 4. compiled CLI ----------------------------------------------------------------------------
build=ok
section "build: scripts/build.mjs --if-stale"
if node scripts/build.mjs --if-stale; then echo "compiled CLI ready (dist/)"; else build=FAILED; fi

# ---- 5. checks and tests ------------------------------------------------------------------------
typecheck=ok
lint=ok

section "typecheck: tsc --noEmit"
if npx --no-install tsc --noEmit; then echo "typecheck ok"; else typecheck=FAILED; fi

section "lint: biome check ."
if npx --no-install biome check .; then :; else lint=FAILED; fi

section "tests: vitest run"
report="$tmp/vitest.json"
set +e
npx --no-install vitest run --reporter=default --reporter=json --outputFile.json="$report" "$@"
tests_status=$?
set -e

section "summary"
echo "build: $build"
echo "typecheck: $typecheck"
echo "lint: $lint"
if [[ -s "$report" ]]; then
  # A plain "N passed, N failed, N skipped" line for readers (and CI) that do not parse vitest.
  node -e '
    const r = JSON.parse(require("node:fs").readFileSync(process.argv[1], "utf8"));
    const skipped = (r.numPendingTests ?? 0) + (r.numTodoTests ?? 0);
    console.log(`vitest: ${r.numPassedTests} passed, ${r.numFailedTests} failed, ${skipped} skipped`);
    const broken = (r.testResults ?? []).filter((f) => f.status === "failed" && (f.assertionResults ?? []).length === 0);
    if (broken.length) console.log(`(${broken.length} test file(s) failed before running any test)`);
  ' "$report" || echo "tests: exit status $tests_status (no readable report)"
else
  echo "tests: exit status $tests_status (no report written)"
fi

if ((tests_status != 0)); then exit "$tests_status"; fi
if [[ "$build" != ok || "$typecheck" != ok || "$lint" != ok ]]; then exit 1; fi
exit 0
