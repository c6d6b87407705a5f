#!/usr/bin/env bash
# Installs what obsbench needs and is missing: the PostgreSQL server with the
# extensions its observer catalog uses, and the MariaDB server (its
# server_audit plugin comes with it), valgrind for --method instructions,
# sysbench (bench/mariadb-driver's peer), iproute2 (the workers' network
# namespace test), zsh and fish (the completion test),
# and headless Chromium for the test of the HTML report. Idempotent: installed packages are
# left alone and apt is not touched when nothing is missing.
#
#   scripts/install-deps.sh        what the tests need (make test)
#   scripts/install-deps.sh demo   what the default experiment needs (make
#                                  demo): PostgreSQL with pgaudit, valgrind
set -euo pipefail

major=${PG_MAJOR:-15}
packages=(
  "postgresql-$major"
  postgresql-contrib
  "postgresql-$major-pgaudit"
  "postgresql-$major-pg-wait-sampling"
  # the catalog's statistics and audit extensions DBAs add
  "postgresql-$major-pg-stat-kcache"
  "postgresql-$major-pg-qualstats"
  "postgresql-$major-wal2json"
  "postgresql-$major-pgauditlogtofile"
  mariadb-server
  # --method instructions: the server under valgrind's instruction counter
  valgrind
  # bench/mariadb-driver's peer: the same query driven by sysbench
  sysbench
  # the HTML report's browser test: headless Chromium driven by ChromeDriver
  chromium
  chromium-driver
  # obsbench capture's test of logs in other languages: the locales a
  # server's lc_messages names (generated below)
  locales
  # the workers' test in network namespaces of their own: ip netns, veth
  iproute2
  # the test of 'obsbench completion': its scripts run in each shell
  zsh
  fish
)
# The locales whose PostgreSQL messages the capture test reads: German
# keeps the severity LOG, Russian translates it too.
locales=(de_DE ru_RU)

case "${1:-}" in
  demo)
    # The default experiment: a managed PostgreSQL with the libraries of
    # its default observers (auto_explain and pg_stat_statements come with
    # contrib, pgaudit apart), counted under valgrind.
    packages=("postgresql-$major" postgresql-contrib "postgresql-$major-pgaudit" valgrind)
    locales=()
    ;;
  "") ;;
  *) echo "usage: $0 [demo]" >&2; exit 2 ;;
esac

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

missing_locales=()
for l in "${locales[@]}"; do
  if ! locale -a 2>/dev/null | grep -qix "$l.utf8"; then
    missing_locales+=("$l")
  fi
done

if ((${#missing[@]} == 0 && ${#missing_locales[@]} == 0)); then
  exit 0
fi

if [[ $(id -u) -ne 0 ]]; then
  sudo=sudo
  command -v sudo >/dev/null || { echo "not root and no sudo: run 'apt-get install ${missing[*]}' as root" >&2; exit 1; }
else
  sudo=
fi
if ((${#missing[@]} > 0)); then
  echo "installing: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
for l in "${missing_locales[@]}"; do
  echo "generating locale $l.UTF-8"
  $sudo localedef -i "$l" -c -f UTF-8 "$l.UTF-8"
done
# The packages create and start a system cluster on port 5432 and a system
# MariaDB on 3306; obsbench does not use them (it manages its own servers),
# so leave them as the packages set them.
