import { appendFile } from 'node:fs/promises';

/**
 * GitHub Actions shows, on a run's page, the Markdown that its steps append to the file named by GITHUB_STEP_SUMMARY:
 * `check` appends its Markdown report there whatever it prints on stdout, so a job log in table form and a summary
 * for people come from one run. Elsewhere the variable is not set and nothing happens.
 */
export async function appendStepSummary(env: NodeJS.ProcessEnv, markdown: string): Promise<string | null> {
  const path = env.GITHUB_STEP_SUMMARY;
  if (path === undefined || path === '') return null;
  try {
    await appendFile(path, `${markdown}\n`, 'utf8');
    return null;
  } catch (error) {
    // The gate's verdict stands without the summary: the caller warns rather than fails.
    return `cannot append the report to GITHUB_STEP_SUMMARY (${path}): ${(error as Error).message}`;
  }
}
