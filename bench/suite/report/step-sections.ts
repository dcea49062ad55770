/**
 * The sections the insight and patterns steps write themselves as markdown, targets included: their figures do not
 * fit the shared tables, so the steps render them and the report only places them.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export function stepSections(dir: string): string[] {
  const lines: string[] = [];
  for (const section of ['insight.md', 'patterns.md']) {
    const file = join(dir, section);
    if (existsSync(file)) lines.push(readFileSync(file, 'utf8').trimEnd(), '');
  }
  return lines;
}
