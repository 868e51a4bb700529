/**
 * The worker's hot statements (secret loads, claim re-checks, attempt records), grouped with `Batcher`
 * (`@lectern/db`): one statement in flight at a time, so concurrent attempts share it, and a 5 ms wait for company
 * when idle.
 */
export const GROUP_COMMIT = { maxBatch: 256, parallel: 1, lingerMs: 5 } as const;
