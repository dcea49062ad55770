/**
 * Summarises a V8 CPU profile (node --cpu-prof, written by BENCH_CPU_PROF=1 under <run dir>/profiles/): where the
 * service's own CPU time goes, by package / source area and by function (self time).
 *
 *   npx tsx bench/suite/profile-summary.ts <file.cpuprofile> [top=25]
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

function area(url: string, name: string): string {
  if (url === '')
    return name === '(garbage collector)' ? '(garbage collector)' : name.startsWith('(') ? name : '(native)';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return `npm:${pkg[1]}`;
  if (url.startsWith('node:')) return `node:${url.slice(5).split('/')[0]}`;
  const src = /\/(src|dist\/src)\/(.*)$/.exec(url);
  if (src) return `src/${(src[2] ?? '').split('/').slice(0, -1).join('/') || '.'}`;
  return url;
}

const file = process.argv[2];
if (!file) {
  console.error('usage: npx tsx bench/suite/profile-summary.ts <file.cpuprofile> [top]');
  process.exit(2);
}
const top = Number(process.argv[3] ?? 25);
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const selfMicros = new Map<number, number>();
profile.samples.forEach((id, i) => selfMicros.set(id, (selfMicros.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
const total = [...selfMicros.values()].reduce((a, b) => a + b, 0);
const idle = [...selfMicros.entries()]
  .filter(([id]) => byId.get(id)?.callFrame.functionName === '(idle)')
  .reduce((a, [, v]) => a + v, 0);
const busy = total - idle;

const byArea = new Map<string, number>();
const byFunction = new Map<string, number>();
for (const [id, micros] of selfMicros) {
  const node = byId.get(id);
  if (!node || node.callFrame.functionName === '(idle)') continue;
  const { functionName, url, lineNumber } = node.callFrame;
  const a = area(url, functionName);
  byArea.set(a, (byArea.get(a) ?? 0) + micros);
  const key = `${functionName || '(anonymous)'}  ${url.replace(/^.*node_modules\//, '').replace(/^file:\/\/.*\/(src|dist)\//, '$1/')}:${lineNumber + 1}`;
  byFunction.set(key, (byFunction.get(key) ?? 0) + micros);
}
const pct = (v: number): string => `${((100 * v) / busy).toFixed(1).padStart(5)} %`;
console.log(
  `profile ${file}: ${(total / 1e6).toFixed(1)} s sampled, busy ${(busy / 1e6).toFixed(1)} s (${((100 * busy) / total).toFixed(0)} %)`,
);
console.log('\nself time by area (share of busy time):');
for (const [name, v] of [...byArea].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`  ${pct(v)}  ${name}`);
console.log('\nself time by function:');
for (const [name, v] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`  ${pct(v)}  ${name}`);
