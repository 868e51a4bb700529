import { pino, type DestinationStream, type Logger } from 'pino';

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

/** A quoted SQL literal, with doubled quotes inside (`'O''Brien'`), optionally `E'…'`. */
const SQL_LITERAL = /(?:\bE)?'(?:[^']|'')*'/g;
/** Data exceptions (SQLSTATE class 22) quote the offending value in the reason: `… integer: "Ada"`. */
const QUOTED_VALUE = /"(?:[^"]|"")*"/g;
const SQL_MESSAGE = /\b(select|insert|update|delete|with)\b[\s\S]* - /i;
/** The values PostgreSQL repeats in `detail`: `Key (external_id)=(bob) already exists`, `Failing row contains (…)`. */
const DETAIL_VALUES = /\)=\((?:[^()]|\([^()]*\))*\)|contains \((?:[^()]|\([^()]*\))*\)/g;

/** A serialised error (and its causes) with SQL values taken out: only the statement's shape stays. */
function redactDbError(value: unknown, depth = 0): unknown {
  if (typeof value !== 'object' || value === null || depth > 5) return value;
  const e = { ...(value as Record<string, unknown>) };
  // pg errors (and MikroORM's wrappers, which copy their fields) carry a severity or a SQLSTATE routine.
  // The driver's message is `<statement with values> - <reason>`; a wrapper's message may repeat its cause's.
  const isDb =
    typeof e.severity === 'string' ||
    typeof e.routine === 'string' ||
    /Exception$|DatabaseError/.test(String(e.type)) ||
    SQL_MESSAGE.test(String(e.message));
  if (isDb) {
    const dataException = typeof e.code === 'string' && e.code.startsWith('22');
    for (const k of ['message', 'stack', 'sql', 'query', 'internalQuery']) {
      if (typeof e[k] !== 'string') continue;
      const redacted = (e[k] as string).replace(SQL_LITERAL, "'?'");
      e[k] = dataException ? redacted.replace(QUOTED_VALUE, '"?"') : redacted;
    }
    if (typeof e.detail === 'string')
      e.detail = e.detail.replace(DETAIL_VALUES, (m) => m.replace(/\(.*\)$/, '(?)'));
    delete e.parameters;
    delete e.params;
  }
  if (e.cause !== undefined) e.cause = redactDbError(e.cause, depth + 1);
  return e;
}

/**
 * Errors as pino serialises them, minus SQL values: the database driver puts every bound value into the
 * message (`select … where name = 'Ada' - …`), and those are learner names, search terms, CSV text.
 * The statement, the SQLSTATE code and the request id stay, which is what an operator needs.
 */
export function serializeError(err: unknown): unknown {
  const base = err instanceof Error ? pino.stdSerializers.err(err) : err;
  return redactDbError(base);
}

export function createLogger(
  opts: { level?: string; name?: string; destination?: DestinationStream } = {},
): Logger {
  const options: pino.LoggerOptions = {
    name: opts.name ?? 'lectern',
    level: opts.level ?? 'info',
    serializers: { err: serializeError },
    redact: { paths: REDACT, censor: '[redacted]' },
    base: { pid: process.pid },
  };
  return opts.destination ? pino(options, opts.destination) : pino(options);
}
