/** The report's title, the command, the machine it ran on, what was built, and the sizes of the run. */
import { execFileSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { esVersion } from '../../lib/es.js';
import { settings } from '../../lib/env.js';
import { REPO } from '../../lib/services.js';
import { fmtInt } from '../../lib/stats.js';

/** A command's output; 'unknown' when it fails, since a fact missing from the header must not stop the report. */
function sh(command: string, args: string[]): string {
  try {
    return execFileSync(command, args, { cwd: REPO, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return 'unknown';
  }
}

export async function header(today: string, scaled: boolean): Promise<string[]> {
  const loadStart = process.env.BENCH_LOADAVG_START ?? 'unknown';
  const loadEnd = os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(', ');
  const lines = [
    `# Benchmarks — ${today}${scaled ? ' (scaled down)' : ''}`,
    '',
    `Command: \`${process.env.BENCH_COMMAND ?? 'make bench'}\``,
    '',
    '| machine | |',
    '|---|---|',
    `| cores (nproc) | ${os.availableParallelism()} (${os.cpus()[0]?.model ?? 'unknown'}) |`,
    `| memory | ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB |`,
    `| load average (1, 5, 15 min) at start / end | ${loadStart} / ${loadEnd} |`,
    `| kernel | ${os.release()} |`,
    `| Node.js | ${process.version} |`,
    `| Elasticsearch | ${await esVersion().catch(() => 'unknown')} |`,
    `| original server | ${sh('bash', ['bench/suite/original-server.sh', 'versions'])} |`,
    monitorServerRow(),
    '',
    `Sizes: ingest runs ${settings.seconds} s each after ${settings.warmupSeconds} s of warm-up, at ${settings.clients.join(', ')} clients; ` +
      `queries on ${fmtInt(settings.metrics)} metrics, ${settings.queryRequests} requests per query (at most ${settings.querySeconds} s), ` +
      `at ${settings.queryClients.join(' and ')} concurrent client(s). All on this one machine: the load generator, the servers and Elasticsearch share its cores.`,
  ];
  if (loadStart !== 'unknown' && Number(loadStart.split(',')[0]) > os.availableParallelism() * 0.5) {
    lines.push(
      '',
      `**The machine was busy with other work when this run started (load ${loadStart}): take these figures as indicative only; final figures belong to a quiet machine.**`,
    );
  }
  lines.push('');
  return lines;
}

/**
 * The commit and build that were measured. run.sh records both at the start; a commit or a rebuild during the run
 * would mean the figures measured two versions, so the row says so.
 */
function monitorServerRow(): string {
  const server = join(REPO, 'dist/src/server.js');
  const built = existsSync(server) ? statSync(server).mtime.toISOString().slice(0, 16).replace('T', ' ') : 'unknown';
  const head = sh('git', ['rev-parse', '--short', 'HEAD']);
  const gitStart = process.env.BENCH_GIT_START ?? head;
  const distStart = process.env.BENCH_DIST_START ?? built;
  const changed = gitStart !== head || distStart !== built;
  return (
    `| monitor-server | ${gitStart}${sh('git', ['status', '--porcelain', 'src']) ? ' + uncommitted changes in src/' : ''}; dist/ built ${distStart} UTC` +
    (changed ? ` — **changed during the run: HEAD ${head}, dist/ built ${built} UTC at the end**` : '') +
    ' |'
  );
}
