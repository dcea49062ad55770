import { appMain, errorNode, fill } from './dom.js';

/**
 * Runs each section's loader; an error shows in its section (and <main data-failed>). <main data-state="ready"> says
 * when all are done, which is what the browser tests wait for.
 */
export async function run(loaders: Record<string, () => Promise<void>>): Promise<void> {
  const main = appMain();
  await Promise.all(
    Object.entries(loaders).map(([id, load]) =>
      load().catch((error: unknown) => {
        fill(id, errorNode(error));
        main.dataset.failed = 'true';
      }),
    ),
  );
  main.dataset.state = 'ready';
}
