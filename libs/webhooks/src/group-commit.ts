/**
 * The worker's hot statements (secret loads, claim re-checks, attempt records), grouped with `Batcher`
 * (`@lectern/db`): one statement in flight at a time, so concurrent attempts share it, and a 5 ms wait for company
 * when idle.
 */
export const GROUP_COMMIT = { maxBatch: 256, parallel: 1, lingerMs: 5 } as const;

/**
 * Attempt records wait up to 10 ms for company: a record is written after its POST, so the wait delays no
 * delivery, and under a burst each statement takes a quarter more rows (records per 10,000 deliveries ~800 →
 * ~600 in the bench). The rows stay leased meanwhile, a few dozen at most.
 */
export const RECORD_GROUP_COMMIT = { ...GROUP_COMMIT, lingerMs: 10 } as const;
