/**
 * The service's output, started as `npm start` starts it with stdout a pipe
 * (e2e/global-setup.ts), is JSON lines from end to end — the first start's
 * portal build and Next.js's own messages included — so a log collector never
 * meets a line it cannot parse (docs/operations.md, "Logs").
 */
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { expect, test } from '@playwright/test'

const ROOT = path.resolve(import.meta.dirname, '..')

test('every line the service wrote is a JSON log record', async ({ request }) => {
  // The portal has rendered at least one page (Next.js has started and printed what it prints).
  expect((await request.get('/')).status()).toBe(200)
  const log = readFileSync(
    process.env.E2E_SERVICE_LOG ?? path.join(ROOT, 'e2e/artifacts/service.log'),
    'utf8',
  )
  // The service is still writing: a last line without its newline may be half written.
  const complete = log.slice(0, log.lastIndexOf('\n') + 1)
  const lines = complete.split('\n').filter((line) => line.trim() !== '')
  expect(lines.length).toBeGreaterThan(0)
  const notJson = lines.filter((line) => {
    try {
      const record = JSON.parse(line) as { level?: unknown; msg?: unknown }
      return typeof record.level !== 'number' || typeof record.msg !== 'string'
    } catch {
      return true
    }
  })
  expect(notJson).toEqual([])
  // Next.js's start-up line is among them, as a record.
  expect(lines.some((line) => line.includes('"source":"console"') && line.includes('next.config'))).toBe(true)
})
