#!/usr/bin/env bash
# The lint checks, each run even when one before it failed: ESLint (eslint.config.js), Prettier (.prettierrc.json)
# and knip (knip.jsonc: unused files, exports and dependencies). The commands are package.json's lint:* scripts.
# Prints PASS/FAIL per check, then "lint: N passed, N failed" (counted by scripts/test.sh); exit 1 if any failed.
# Needs node_modules (make install).
set -uo pipefail
cd "$(dirname "$0")/.."

passed=0
failed=0
for check in eslint prettier knip; do
  start=$SECONDS
  if npm run --silent "lint:$check"; then
    echo "PASS $check ($((SECONDS - start)) s)"
    passed=$((passed + 1))
  else
    hint=""
    if [[ "$check" == prettier ]]; then hint=" (npm run format rewrites them)"; fi
    echo "FAIL $check ($((SECONDS - start)) s): npm run lint:$check lists the findings$hint"
    failed=$((failed + 1))
  fi
done
echo "lint: $passed passed, $failed failed"
((failed == 0))
