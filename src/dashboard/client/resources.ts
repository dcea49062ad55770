import { RESOURCES, type ResourceName } from '../../domain/resources.js';

/** How the dashboard shows each resource: keyed by ResourceName, so that a resource added to the domain must be
 * labelled here. The order of the keys is the order of the variant page's plots and columns. */
const DISPLAY = {
  memory: { label: 'Memory', unit: 'MB' },
  total_time: { label: 'Total time', unit: 's' },
  cpu: { label: 'CPU usage', unit: '' },
  user_time: { label: 'User time', unit: 's' },
  kernel_time: { label: 'Kernel time', unit: 's' },
} satisfies Record<ResourceName, { label: string; unit: string }>;

export interface Resource {
  name: ResourceName;
  /** The metric field that holds it. */
  field: (typeof RESOURCES)[ResourceName];
  label: string;
  unit: string;
}

export const SHOWN_RESOURCES: readonly Resource[] = (Object.keys(DISPLAY) as ResourceName[]).map((name) => ({
  name,
  field: RESOURCES[name],
  ...DISPLAY[name],
}));

export const RESOURCE = Object.fromEntries(SHOWN_RESOURCES.map((r) => [r.name, r])) as Record<ResourceName, Resource>;

/** The resource of that name; undefined for a name the dashboard does not know (an API newer than the page). */
export const resourceNamed = (name: string): Resource | undefined => SHOWN_RESOURCES.find((r) => r.name === name);
