#!/usr/bin/env bash
# Installs what obsbench needs and is missing: the PostgreSQL server with the
# extensions its observer catalog uses, and the MariaDB server (its
# server_audit plugin comes with it), valgrind for --method instructions,
# sysbench (bench/mariadb-driver's peer),
# and headless Chromium for the test of the HTML report. Idempotent: installed packages are
# left alone and apt is not touched when nothing is missing.
set -euo pipefail

major=${PG_MAJOR:-15}
packages=(
  "postgresql-$major"
  postgresql-contrib
  "postgresql-$major-pgaudit"
  "postgresql-$major-pg-wait-sampling"
  mariadb-server
  # --method instructions: the server under valgrind's instruction counter
  valgrind
  # bench/mariadb-driver's peer: the same query driven by sysbench
  sysbench
  # the HTML report's browser test: headless Chromium driven by ChromeDriver
  chromium
  chromium-driver
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

if ((${#missing[@]} == 0)); then
  exit 0
fi

echo "installing: ${missing[*]}"
if [[ $(id -u) -ne 0 ]]; then
  sudo=sudo
  command -v sudo >/dev/null || { echo "not root and no sudo: run 'apt-get install ${missing[*]}' as root" >&2; exit 1; }
else
  sudo=
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
# The packages create and start a system cluster on port 5432 and a system
# MariaDB on 3306; obsbench does not use them (it manages its own servers),
# so leave them as the packages set them.
