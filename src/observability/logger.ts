import { pino, type Logger } from 'pino';

/** JSON lines on stdout; request bodies are never logged. */
export function createLogger(level: string): Logger {
  return pino({
    level,
    base: { service: 'monitor-server' },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
  });
}

export type { Logger };
