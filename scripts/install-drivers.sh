#!/usr/bin/env bash
# Installs the database drivers that the BI-driver tests (test/integration/bi-drivers.test.ts) run
# against the SQL interface, from the project's own files, as the tools that use them would:
#   - clickhouse-connect with SQLAlchemy (Python; Superset): a venv built from
#     test/drivers/python/requirements.txt;
#   - clickhouse-go v2 (Go; Grafana's ClickHouse plugin): test/drivers/go (go.mod/go.sum), built
#     to one binary;
#   - the ClickHouse JDBC v2 driver (Java; DBeaver, Metabase): test/drivers/java/pom.xml, compiled
#     with the driver and its dependencies copied to target/lib;
#   - @clickhouse/client (JavaScript) comes with `npm ci` (package.json).
# Idempotent and quick once installed: each step runs again only when its inputs are newer than
# what it built (a stamp per driver). Output goes to $VAULTSTREAM_DRIVERS_DIR (default
# ~/.cache/vaultstream-drivers), which test/support/drivers.ts reads too.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
root="$PWD"
out="${VAULTSTREAM_DRIVERS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/vaultstream-drivers}"
mkdir -p "$out"

# stale STAMP INPUT...: true when STAMP is missing or any INPUT is newer than it.
stale() {
  local stamp="$1" f
  shift
  [[ -e "$stamp" ]] || return 0
  for f in "$@"; do [[ "$f" -nt "$stamp" ]] && return 0; done
  return 1
}

need() {
  command -v "$1" >/dev/null 2>&1 || {
    printf 'install-drivers: %s not found (%s)\n' "$1" "$2" >&2
    exit 1
  }
}

# ---- Python: clickhouse-connect + SQLAlchemy in a venv ------------------------------------------
py_req="$root/test/drivers/python/requirements.txt"
if stale "$out/python.stamp" "$py_req"; then
  need python3 "the Python driver"
  echo "install-drivers: python venv ($out/venv)"
  rm -rf "$out/venv"
  python3 -m venv "$out/venv"
  "$out/venv/bin/pip" install --quiet --disable-pip-version-check -r "$py_req"
  touch "$out/python.stamp"
fi

# ---- Go: clickhouse-go v2 ----------------------------------------------------------------------
go_dir="$root/test/drivers/go"
if stale "$out/go.stamp" "$go_dir"/go.mod "$go_dir"/go.sum "$go_dir"/*.go; then
  need go "the Go driver"
  echo "install-drivers: go build ($out/driver-go)"
  (cd "$go_dir" && go build -o "$out/driver-go" .)
  touch "$out/go.stamp"
fi

# ---- Java: the JDBC v2 driver ------------------------------------------------------------------
java_dir="$root/test/drivers/java"
# The classes are built into this checkout (target/), the stamp is shared by every checkout: a
# checkout without its own build builds it.
if [[ ! -e "$java_dir/target/classes/vaultstream/DriverCheck.class" || ! -d "$java_dir/target/lib" ]] ||
  stale "$out/java.stamp" "$java_dir/pom.xml" "$java_dir"/src/main/java/vaultstream/*.java; then
  need mvn "the Java driver"
  echo "install-drivers: mvn package ($java_dir/target)"
  (cd "$java_dir" && mvn --batch-mode --quiet package -DskipTests)
  touch "$out/java.stamp"
fi

echo "install-drivers: python, go and java drivers ready in $out"
