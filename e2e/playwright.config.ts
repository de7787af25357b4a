/**
 * Browser tests in Debian's Chromium (Playwright's own browser downloads do
 * not work offline). The global setup starts the whole service with
 * `npm start` on a free port, its own database and its own devnet.
 */
import { defineConfig } from '@playwright/test'
import { freePort } from '../src/test/free-port'

// A port nothing listens on, chosen once here; Playwright's workers inherit the environment.
process.env.E2E_PORT ??= String(await freePort())
const baseURL = `http://localhost:${process.env.E2E_PORT}`
// The port of the webhook receiver e2e/webhooks.spec.ts starts; the service allow-lists it.
process.env.E2E_WEBHOOK_PORT ??= String(await freePort())

/** The spec files that assert how fast a page becomes usable. */
const TIMED = '**/explorer.spec.ts'

export default defineConfig({
  testDir: '.',
  testMatch: '**/*.spec.ts',
  outputDir: './artifacts/test-results',
  globalSetup: './global-setup.ts',
  timeout: 60_000,
  expect: { timeout: 15_000 },
  // Two files at a time (a file's tests in order): every test works on data of its own
  // (wallets, keys, collections it deploys) against the one service. The explorer's file
  // times its pages (a gallery usable within 1.5 s): it runs after the others, alone, so
  // that another file's browser does not share the machine with its measurements.
  fullyParallel: false,
  workers: 2,
  projects: [
    { name: 'pages', testIgnore: TIMED },
    { name: 'timed', testMatch: TIMED, dependencies: ['pages'] },
  ],
  retries: 0,
  reporter: [['list'], ['html', { outputFolder: './artifacts/report', open: 'never' }]],
  use: {
    baseURL,
    browserName: 'chromium',
    screenshot: 'only-on-failure',
    trace: 'retain-on-failure',
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
      ],
    },
  },
})
