/**
 * How the browser tests and bench:explorer launch Chromium: Debian's build (Playwright's own
 * browser downloads do not work offline), quiet, with nothing of its own on the network.
 */
import type { LaunchOptions } from '@playwright/test'

export const chromiumLaunchOptions: LaunchOptions = {
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
}
