/**
 * Browser tests in Debian's Chromium (Playwright's own browser downloads do
 * not work offline). The global setup starts the whole service with
 * `npm start` on a free port, its own database and its own devnet.
 */
import { defineConfig } from '@playwright/test'
import { freePort } from '../src/test/free-port'
import { chromiumLaunchOptions } from './helpers/chromium'

// A port nothing listens on, chosen once here; Playwright's workers inherit the environment.
process.env.E2E_PORT ??= String(await freePort())
const baseURL = `http://localhost:${process.env.E2E_PORT}`
// The port of the webhook receiver e2e/webhooks.spec.ts starts; the service allow-lists it.
process.env.E2E_WEBHOOK_PORT ??= String(await freePort())

export default defineConfig({
  testDir: '.',
  testMatch: '**/*.spec.ts',
  outputDir: './artifacts/test-results',
  globalSetup: './global-setup.ts',
  timeout: 60_000,
  expect: { timeout: 15_000 },
  // Two files at a time (a file's tests in order): every test works on data of its own
  // (wallets, keys, collections it deploys) against the one service. How fast pages become
  // usable is measured by `npm run bench:explorer`, not here: the machine is shared.
  fullyParallel: false,
  workers: 2,
  retries: 0,
  reporter: [['list'], ['html', { outputFolder: './artifacts/report', open: 'never' }]],
  use: {
    baseURL,
    browserName: 'chromium',
    screenshot: 'only-on-failure',
    trace: 'retain-on-failure',
    launchOptions: chromiumLaunchOptions,
  },
})
