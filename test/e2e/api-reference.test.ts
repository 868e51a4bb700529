/**
 * The API reference at /api/v1/docs, in Chromium, with every request that would leave the service refused and
 * recorded: the page renders from the service's own assets, finds an operation through its search and opens it.
 */
import { expect } from 'chai';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { startTestApp, type TestApp } from '../support/context.js';
import { CHROMIUM, OUTPUT_DIR } from '../support/player-browser.js';

describe('API reference: a maintained reference UI over the served OpenAPI document, with nothing from outside', function () {
  this.timeout(120_000);
  let app: TestApp;
  let browser: Browser;

  before(async () => {
    app = await startTestApp();
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox'] });
  });
  after(async () => {
    await browser?.close();
    await app?.close();
  });

  it('renders /api/v1 and /player/v1, finds createCourse by search, and asks nothing of another host', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const origin = new URL(app.url).origin;
    const outside: string[] = [];
    const cspViolations: string[] = [];
    page.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) cspViolations.push(m.text());
    });
    await page.route('**/*', (route) => {
      const url = route.request().url();
      if (url.startsWith(origin) || url.startsWith('data:') || url.startsWith('blob:'))
        return route.continue();
      outside.push(url);
      return route.abort();
    });
    await page.goto(`${app.base}/docs`);
    await page.getByText('Lectern API', { exact: false }).first().waitFor({ timeout: 30_000 });
    // Both prefixes are in the one document the page renders.
    await page
      .getByText('/player/v1/runs', { exact: false })
      .first()
      .waitFor({ state: 'attached', timeout: 30_000 });

    // Scalar's search: the keyboard shortcut opens it; the query finds the operation by its id or summary.
    await page.keyboard.press('Control+k');
    const search = page
      .locator('input[type="search"], [role="combobox"] input, input[placeholder*="Search" i]')
      .first();
    await search.waitFor({ timeout: 10_000 });
    await search.fill('createCourse');
    const hit = page
      .locator('[role="option"], [role="listbox"] li, a')
      .filter({ hasText: 'Create a draft course' })
      .first();
    await hit.waitFor({ timeout: 10_000 });
    mkdirSync(OUTPUT_DIR, { recursive: true });
    await page.screenshot({ path: path.join(OUTPUT_DIR, 'api-reference-search.png') });
    await hit.click();
    await page
      .getByText('/api/v1/courses', { exact: false })
      .first()
      .waitFor({ state: 'attached', timeout: 10_000 });
    await page.screenshot({ path: path.join(OUTPUT_DIR, 'api-reference-operation.png') });

    expect(outside, 'requests to other hosts').to.deep.equal([]);
    expect(cspViolations, 'CSP violations').to.deep.equal([]);
    await page.close();
  });
});
