import { createHash } from 'node:crypto';
import type { ChangeKey } from '../../domain/changes/triage.js';

/** 16 hex digits of SHA-256 over the key's parts (domain/changes/triage.ts): the same on every replica and answer. */
export function changeId(key: ChangeKey): string {
  const parts = [key.pipeline, key.component, key.item_variant, key.machine_class, key.resource, key.first_build];
  return createHash('sha256').update(parts.join('\u0000'), 'utf8').digest('hex').slice(0, 16);
}
