import { readFileSync } from 'node:fs'
import path from 'node:path'

/** The service's log under test (e2e/global-setup.ts writes it). */
const SERVICE_LOG =
  process.env.E2E_SERVICE_LOG ??
  path.join(path.resolve(import.meta.dirname, '../..'), 'e2e/artifacts/service.log')

/** The web process's error-level (or worse) lines the log holds so far. */
export function webErrors(): string[] {
  return readFileSync(SERVICE_LOG, 'utf8')
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .filter((line) => {
      const record = JSON.parse(line) as { level?: number; proc?: string }
      return record.proc === 'web' && (record.level ?? 0) >= 50
    })
}
