/** The dashboard's own URLs. */

export const DASHBOARD = '/dashboard';

export const enc = encodeURIComponent;

export const buildHref = (pipeline: string, build: string): string =>
  `${DASHBOARD}/pipelines/${enc(pipeline)}/builds/${enc(build)}`;

/** A variant's page, on one series (null and undefined members left out). */
export function variantHref(variant: string, series: Record<string, string | null | undefined> = {}): string {
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(series)) if (value !== null && value !== undefined) query.set(key, value);
  const text = query.toString();
  return `${DASHBOARD}/variants/${enc(variant)}${text ? `?${text}` : ''}`;
}

/** A pipeline's page of what its suite costs, of its machine classes' noise, or of the builds its tests changed at. */
export const pipelineHref = (pipeline: string, page: 'cost' | 'noise' | 'changes'): string =>
  `${DASHBOARD}/pipelines/${enc(pipeline)}/${page}`;
