#!/usr/bin/env bash
# Known vulnerabilities in the production dependencies (what the Docker image ships; dev tools are left out):
# `npm audit --omit=dev --audit-level=low` on package-lock.json, counted as one check by scripts/test.sh.
#   PASS  the registry answered and no production dependency has an advisory;
#   FAIL  an advisory of any severity (low and up) concerns a production dependency: each is listed with the
#         advisory, the vulnerable range and whether a fix is in range or a major upgrade (nothing is upgraded
#         here), or npm audit itself could not run (no lock file, an npm error);
#   PASS with "could not check: registry did not answer" when the audit endpoint cannot be reached or does not
#         serve audits (no network, a mirror without /-/npm/v1/security/advisories/bulk): nothing to report is not
#         a finding, so an offline machine is not failed, but the line says that nothing was checked.
# The two are told apart by npm audit's JSON, not its exit code (1 in both cases): a report has
# auditReportVersion; an unanswered audit request is an object with only a message (and the HTTP status when the
# registry answered something else); any other error has an error code (ENOLOCK, ...).
# Prints "audit: N passed, N failed"; exit 1 on a finding or an npm error. Needs Node and npm only (no node_modules).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

# Low and up: every advisory with a severity. The production dependencies are a dozen direct packages of a
# network-facing service; an advisory there, even a low one, is a decision to make (upgrade, replace, or accept in a
# reviewed commit), not noise. (npm's remaining level, info, is not a vulnerability.)
AUDIT_LEVEL=low

out=$(mktemp)
err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT

start=$SECONDS
status=0
npm audit --omit=dev --audit-level="$AUDIT_LEVEL" --json --no-update-notifier --fetch-retries=1 --fetch-timeout=60000 \
  >"$out" 2>"$err" || status=$?

AUDIT_LEVEL="$AUDIT_LEVEL" NPM_STATUS="$status" SECONDS_TAKEN=$((SECONDS - start)) node --input-type=module - "$out" "$err" <<'EOF'
import { readFileSync } from 'node:fs';

const [outFile, errFile] = process.argv.slice(2);
const level = process.env.AUDIT_LEVEL;
const npmStatus = Number(process.env.NPM_STATUS);
const took = `${process.env.SECONDS_TAKEN} s`;
const SEVERITIES = ['info', 'low', 'moderate', 'high', 'critical'];
const counted = SEVERITIES.slice(SEVERITIES.indexOf(level));

const finish = (ok, line) => {
  console.log(line);
  console.log(`audit: ${ok ? 1 : 0} passed, ${ok ? 0 : 1} failed`);
  process.exit(ok ? 0 : 1);
};
const npmSaid = () =>
  readFileSync(errFile, 'utf8')
    .split('\n')
    .filter((l) => l !== '' && !/^npm warn Unknown (user|env) config/.test(l))
    .map((l) => `  ${l}`)
    .join('\n');

let answer;
try {
  answer = JSON.parse(readFileSync(outFile, 'utf8'));
} catch {
  finish(false, `FAIL npm audit (${took}): no JSON answer (exit ${npmStatus}):\n${npmSaid()}`);
}

if (answer !== null && typeof answer === 'object' && 'auditReportVersion' in answer) {
  const bySeverity = answer.metadata?.vulnerabilities ?? {};
  const production = answer.metadata?.dependencies?.prod ?? '?';
  const findings = Object.values(answer.vulnerabilities ?? {}).filter((v) => counted.includes(v.severity));
  if (findings.length === 0 && npmStatus === 0) {
    const info = bySeverity.info > 0 ? ` (${bySeverity.info} informational notice(s) not counted)` : '';
    finish(true, `PASS npm audit (${took}): no known vulnerability in ${production} production dependencies${info}`);
  }
  const lines = findings.map((v) => {
    const advisories = v.via
      .map((via) => (typeof via === 'string' ? `through ${via}` : `${via.title} (${via.url})`))
      .join('; ');
    const fix =
      v.fixAvailable === false
        ? 'no fix available'
        : v.fixAvailable === true
          ? 'fix in range: npm update'
          : `fix: ${v.fixAvailable.name}@${v.fixAvailable.version}${v.fixAvailable.isSemVerMajor ? ' (a MAJOR upgrade)' : ''}`;
    return `  ${v.severity.padEnd(8)} ${v.name}${v.range ? ` ${v.range}` : ''}${v.isDirect ? ' (direct)' : ''}: ${advisories}; ${fix}`;
  });
  const summary = counted.map((s) => `${bySeverity[s] ?? 0} ${s}`).join(', ');
  finish(
    false,
    `FAIL npm audit (${took}): vulnerabilities in production dependencies (${summary}):\n${lines.join('\n')}` +
      (findings.length === 0 ? `\n  (npm audit exited ${npmStatus}:\n${npmSaid()})` : ''),
  );
}

// The audit request got no audit back: npm prints {message[, statusCode, uri, ...]} without an error code.
if (answer !== null && typeof answer === 'object' && typeof answer.message === 'string' && !answer.error?.code) {
  const why = answer.statusCode ? `HTTP ${answer.statusCode}: ${answer.message}` : answer.message;
  finish(true, `PASS npm audit (${took}): could not check: registry did not answer (${why})`);
}

const error = answer?.error ?? {};
finish(
  false,
  `FAIL npm audit (${took}): npm audit could not run: ${error.code ?? 'unknown error'} ${error.summary ?? ''}\n${npmSaid()}`,
);
EOF
