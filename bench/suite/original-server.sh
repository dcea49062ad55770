#!/usr/bin/env bash
# bench/suite/original-server.sh — the original Python server (monitor-server-api 1.1.0 from PyPI) for the benchmarks.
#
#   bench/suite/original-server.sh setup              build the virtualenv once (.cache/original-server-venv)
#   bench/suite/original-server.sh run PORT DBFILE    serve on 127.0.0.1:PORT with SQLite file DBFILE, in the foreground
#                                               (SIGTERM stops it and its workers; the benchmarks start it so)
#   bench/suite/original-server.sh schema DBFILE      create the original's tables in DBFILE (its own create_all)
#   bench/suite/original-server.sh versions           one line: python, flask, sqlalchemy and the WSGI server
#
# It runs the way its docs recommend (launch-monitor-server.sh, which the package installs): uWSGI, 4 workers,
# FLASK_ENV=prod, MONITOR_SERVER_DATABASE_URI=sqlite:///<file>. When uWSGI cannot be built here, gunicorn with
# 4 sync workers stands in (ORIGINAL_WSGI tells which one ran; force one with ORIGINAL_WSGI=gunicorn).
#
# The pins are the stack the original was written for and is known to pass its own tests on (Flask 1.1.4,
# Werkzeug 1.0.1, flask-restx 0.5.1, Flask-SQLAlchemy 2.5.1, SQLAlchemy 1.4): newer Flask/Werkzeug/Jinja break it.
set -euo pipefail
cd "$(dirname "$0")/../.."
VENV="$PWD/.cache/original-server-venv"
PY="${ORIGINAL_PYTHON:-python3}"
PINS=(
  "monitor-server-api==1.1.0"
  "flask==1.1.4" "werkzeug==1.0.1" "jinja2<3.0" "markupsafe<2.1" "itsdangerous<2.0" "click<8.0"
  "flask-restx==0.5.1" "flask-sqlalchemy==2.5.1" "sqlalchemy>=1.4,<1.5"
)

log() { printf '[original-server] %s\n' "$*" >&2; }

setup() {
  if [[ -f "$VENV/.ready" ]]; then return 0; fi
  rm -rf "$VENV"
  log "creating $VENV (pip install ${PINS[*]}); uWSGI compiles with gcc, this takes a few minutes"
  "$PY" -m venv "$VENV"
  "$VENV/bin/pip" install -q --disable-pip-version-check --upgrade "pip<25" "setuptools<70" wheel
  # monitor-server-api itself depends on uwsgi: try with it first, and without it (gunicorn) if it cannot be built.
  if ! "$VENV/bin/pip" install -q --disable-pip-version-check "${PINS[@]}" uwsgi >"$VENV.pip.log" 2>&1; then
    log "uWSGI could not be installed (see $VENV.pip.log); falling back to gunicorn"
    "$VENV/bin/pip" install -q --disable-pip-version-check --no-deps "monitor-server-api==1.1.0"
    "$VENV/bin/pip" install -q --disable-pip-version-check "${PINS[@]:1}" flask-restx pandas requests pyyaml gunicorn
  fi
  "$VENV/bin/pip" install -q --disable-pip-version-check "gunicorn<24" >/dev/null 2>&1 || true
  FLASK_ENV=prod MONITOR_SERVER_DATABASE_URI="sqlite:////tmp/original-server-import-check.sqlite" \
    "$VENV/bin/python" -c 'import monitor_server.uwsgi' || { log "monitor_server does not import"; exit 1; }
  rm -f /tmp/original-server-import-check.sqlite
  touch "$VENV/.ready"
}

wsgi() {
  if [[ "${ORIGINAL_WSGI:-}" == gunicorn || ! -x "$VENV/bin/uwsgi" ]]; then echo gunicorn; else echo uwsgi; fi
}

run() {
  local port="$1" db="$2"
  setup
  mkdir -p "$(dirname "$db")"
  db="$(realpath "$db")"
  export FLASK_ENV=prod MONITOR_SERVER_DATABASE_URI="sqlite:///$db"
  if [[ "$(wsgi)" == uwsgi ]]; then
    # The command line of the project's launcher (bin/launch-monitor-server.sh, installed with it), in the
    # foreground and on loopback; request logging off, as for every target of the benchmarks.
    exec "$VENV/bin/uwsgi" --master --need-app -w monitor_server.uwsgi --callable WSGI_SERVER --die-on-term \
      --http "127.0.0.1:$port" --buffer-size=32768 --harakiri 60 --harakiri-verbose --workers 4 \
      --env MONITOR_SERVER_PAGINATION_COUNT=500 --disable-logging
  else
    exec "$VENV/bin/gunicorn" --bind "127.0.0.1:$port" --workers 4 --timeout 60 monitor_server.uwsgi:WSGI_SERVER
  fi
}

schema() {
  local db="$1"
  setup
  mkdir -p "$(dirname "$db")"
  FLASK_ENV=prod MONITOR_SERVER_DATABASE_URI="sqlite:///$(realpath "$db")" \
    "$VENV/bin/python" -c 'from monitor_server.app import prepare_app; prepare_app()'
}

versions() {
  "$VENV/bin/python" "$PWD/scripts/lib/original-server-versions.py" "$(wsgi)"
}

case "${1:-}" in
  setup) setup ;;
  run) run "$2" "$3" ;;
  schema) schema "$2" ;;
  versions) versions ;;
  *) sed -n '2,9p' "$0" >&2; exit 2 ;;
esac
