// Browser tests run in Debian's Chromium (Playwright's own browser downloads
// cannot work offline). Installs it when missing and allowed, else explains.
import { execSync } from 'node:child_process'
import { existsSync } from 'node:fs'

const path = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
if (!existsSync(path)) {
  const root = typeof process.getuid === 'function' && process.getuid() === 0
  if (!root) {
    console.error(
      `Chromium not found at ${path}: install it with 'sudo apt-get install -y chromium' or set CHROMIUM_PATH.`,
    )
    process.exit(1)
  }
  console.log('Installing Debian chromium for the browser tests…')
  execSync('apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium', {
    stdio: 'inherit',
  })
}
