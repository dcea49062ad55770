// Run: npm run -s lint:cycles (part of scripts/lint.sh). Exit 1 on a cycle, listing its imports.
import { dirname } from 'node:path';
import { parseCircular, parseDependencyTree, shortenTree } from 'dpdm';

/**
 * No import cycle between files, and none between folders: an arrow between two folders runs one way only — down the
 * layers (server → api → application → domain; api → dashboard, observability, store), never back. Imports between a
 * folder and the folders inside it do not count (api/app.ts mounts api/routes/, whose files use api/route.ts); each
 * file directly in src/ (server.ts, config.ts, version.ts) is its own node. Type-only imports count: they are arrows
 * of the architecture too. dpdm (a maintained TypeScript-aware import graph) reads the imports.
 */

const ROOT = 'src';

const nodeOf = (file: string): string => (dirname(file) === ROOT ? file : dirname(file));
const nested = (a: string, b: string): boolean => a.startsWith(`${b}/`) || b.startsWith(`${a}/`);

/** The strongly connected groups of more than one node (Tarjan), each a cycle or several. */
function cycles(edges: Map<string, Set<string>>): string[][] {
  const order = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const found: string[][] = [];
  const visit = (node: string): void => {
    order.set(node, order.size);
    low.set(node, order.get(node) as number);
    stack.push(node);
    for (const next of edges.get(node) ?? []) {
      if (!order.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node) as number, low.get(next) as number));
      } else if (stack.includes(next)) low.set(node, Math.min(low.get(node) as number, order.get(next) as number));
    }
    if (low.get(node) !== order.get(node)) return;
    const group: string[] = [];
    let member: string | undefined;
    do {
      member = stack.pop();
      if (member !== undefined) group.push(member);
    } while (member !== node);
    if (group.length > 1) found.push(group);
  };
  for (const node of edges.keys()) if (!order.has(node)) visit(node);
  return found;
}

const tree = shortenTree(process.cwd(), await parseDependencyTree(`${ROOT}/**/*.ts`, { transform: false }));
const fileCycles = parseCircular(tree);
const folderEdges = new Map<string, Set<string>>();
const because = new Map<string, string>();
for (const [file, dependencies] of Object.entries(tree)) {
  for (const dependency of dependencies ?? []) {
    const target = dependency.id;
    if (!target?.startsWith(`${ROOT}/`)) continue;
    const [from, to] = [nodeOf(file), nodeOf(target)];
    if (from === to || nested(from, to)) continue;
    if (!folderEdges.has(from)) folderEdges.set(from, new Set());
    folderEdges.get(from)?.add(to);
    if (!folderEdges.has(to)) folderEdges.set(to, new Set());
    because.set(`${from} ${to}`, `${file} imports ${target}`);
  }
}
const folderCycles = cycles(folderEdges);

for (const cycle of fileCycles) console.log(`file cycle: ${[...cycle, cycle[0]].join(' → ')}`);
for (const group of folderCycles) {
  console.log(`folder cycle among ${group.join(', ')}:`);
  for (const from of group)
    for (const to of group) if (because.has(`${from} ${to}`)) console.log(`  ${because.get(`${from} ${to}`)}`);
}
const files = Object.keys(tree).filter((file) => file.startsWith(`${ROOT}/`)).length;
console.log(
  `import cycles: ${fileCycles.length} between files, ${folderCycles.length} between folders ` +
    `(${files} files, ${folderEdges.size} folders)`,
);
process.exitCode = fileCycles.length + folderCycles.length === 0 ? 0 : 1;
