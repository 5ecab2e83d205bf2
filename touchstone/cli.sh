#!/bin/sh
# `touchstone COMMAND ...` is `manage.py COMMAND ...` for this clone: run by its .venv's Python, with the
# settings in the clone's touchstone.env (NAME=value lines; a variable set in the environment wins).
# `make cli` writes touchstone.env and installs this file as .venv/bin/touchstone, two levels below the clone,
# so it works from any directory and in any shell, activated or not.
root=$(CDPATH='' cd -- "$(dirname -- "$0")/../.." && pwd)
export TOUCHSTONE_ENV_FILE="${TOUCHSTONE_ENV_FILE:-$root/touchstone.env}"
export TOUCHSTONE_PROG="${TOUCHSTONE_PROG:-touchstone}"  # what help and errors call the command (manage.py)
exec "$root/.venv/bin/python" "$root/manage.py" "$@"
