import { setupRun, teardownRun } from './context.js';

/** Mocha root hooks: one database and bus prefix for the whole run. */
export const mochaHooks = {
  async beforeAll(this: Mocha.Context) {
    this.timeout(60_000);
    await setupRun();
  },
  async afterAll(this: Mocha.Context) {
    this.timeout(60_000);
    await teardownRun();
  },
};
