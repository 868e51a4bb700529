import { pino, type Logger } from 'pino';

export type { Logger };

/** Paths never written to a log line, whatever a caller passes in. */
const REDACT = [
  'req.headers.authorization',
  'headers.authorization',
  'authorization',
  'signingSecret',
  'secret',
  '*.signingSecret',
  '*.secret',
  'key',
];

export function createLogger(opts: { level?: string; name?: string } = {}): Logger {
  return pino({
    name: opts.name ?? 'lectern',
    level: opts.level ?? 'info',
    redact: { paths: REDACT, censor: '[redacted]' },
    base: { pid: process.pid },
  });
}
