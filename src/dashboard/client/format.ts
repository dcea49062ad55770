import { resourceNamed } from './resources.js';

export const number = new Intl.NumberFormat('en', { maximumSignificantDigits: 4 });
export const integer = new Intl.NumberFormat('en');

/** A measure with its unit: "12.34 MB", "0.251 s". */
export function formatValue(value: number | null | undefined, resource: string): string {
  if (value === null || value === undefined || Number.isNaN(value)) return '–';
  const unit = resourceNamed(resource)?.unit ?? '';
  return unit ? `${number.format(value)} ${unit}` : number.format(value);
}

export const formatPct = (pct: number | null | undefined): string =>
  pct === null || pct === undefined ? '–' : `${pct > 0 ? '+' : ''}${number.format(pct)} %`;

/** A long id (a hash) cut to its first characters. */
export const short = (id: string | null | undefined): string =>
  id && id.length > 12 ? `${id.slice(0, 10)}…` : (id ?? '–');

export const formatDate = (date: string | null | undefined): string =>
  date ? date.replace('T', ' ').replace(/\.\d+$/, '') : '–';
