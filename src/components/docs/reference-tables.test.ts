/**
 * The /docs guide (src/app/docs/page.tsx and reference-tables.tsx) against
 * what the API really does: the scope table names every scoped operation of
 * /openapi.json, the error table every status a /v1 path answers with its
 * code, and the polling example deduplicates on the identity the API
 * defines for an event (transaction_hash, log_index, batch_index).
 */
import { createElement } from 'react'
import { renderToStaticMarkup } from 'react-dom/server'
import { describe, expect, it, vi } from 'vitest'
import { openApiDocument } from '@/server/rest/openapi'
import { ErrorsSection, ScopesSection } from './reference-tables'

vi.mock('server-only', () => ({}))
vi.mock('@/server/services/next-services', () => ({
  getServices: () => ({ config: { PUBLIC_URL: 'https://nft.example.org', NETWORK: 'devnet' } }),
}))
vi.mock('@/components/docs/api-reference', () => ({ ApiReference: () => null }))

// biome-ignore lint/suspicious/noExplicitAny: OpenAPI response objects
type Json = any

const doc = openApiDocument({ PUBLIC_URL: 'https://nft.example.org', NETWORK: 'devnet' })
const text = (html: string) =>
  html
    .replace(/<[^>]+>/g, '')
    .replace(/&#x27;/g, "'")
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&')

describe('/docs guide', () => {
  it('the Scopes table lists every scoped operation of the document under its scope', () => {
    const html = renderToStaticMarkup(createElement(ScopesSection))
    const rows = new Map<string, string>()
    for (const [, row] of html.matchAll(/<tr>(.*?)<\/tr>/gs)) {
      const cells = [...row!.matchAll(/<td>(.*?)<\/td>/gs)].map((m) => text(m[1]!))
      if (cells.length === 2) rows.set(cells[0]!.trim(), cells[1]!)
    }
    const missing: string[] = []
    for (const [path, item] of Object.entries(doc.paths ?? {})) {
      const get = (item as { get?: { security?: Array<Record<string, string[]>> } }).get
      const scope = get?.security?.[0]?.bearer?.[0]
      if (!scope) continue
      if (!(rows.get(scope) ?? '').includes(path)) missing.push(`${scope}: GET ${path}`)
    }
    expect(missing).toEqual([])
  })

  it('the Errors table lists every status a /v1 path answers, with its code', () => {
    const html = renderToStaticMarkup(createElement(ErrorsSection))
    const rows = [...html.matchAll(/<tr>(.*?)<\/tr>/gs)].map(([, row]) =>
      [...row!.matchAll(/<td>(.*?)<\/td>/gs)].map((m) => text(m[1]!).trim()),
    )
    const listed = new Map(rows.filter((r) => r.length === 3).map((r) => [r[0]!, r[1]!]))
    // Every error status of every operation, with the code of its example (the handlers' own).
    const expected = new Map<string, string>()
    for (const item of Object.values(doc.paths ?? {}))
      for (const op of Object.values(item as Record<string, { responses?: Record<string, Json> }>))
        for (const [status, response] of Object.entries(op.responses ?? {})) {
          const code = response?.content?.['application/json']?.example?.error?.code
          if (Number(status) >= 400 && code) expected.set(status, code)
        }
    const missing = [...expected]
      .filter(([status, code]) => !(listed.get(status) ?? '').includes(code))
      .map(([status, code]) => `${status} ${code}`)
    expect(missing).toEqual([])
  })

  it('the polling example tells apart the events of one ERC-2309 range log (batch_index)', async () => {
    const { default: DocsPage } = await import('@/app/docs/page')
    const page = text(renderToStaticMarkup(createElement(DocsPage)))
    const line = page.match(/const id = (`[^`]*`)/)
    expect(line, 'the polling example builds an event id').not.toBeNull()
    const idOf = new Function('e', `return ${line![1]}`) as (e: object) => string
    // Two canonical rows of /v1/activity from one ConsecutiveTransfer log: the same transaction and
    // log index, batch_index 0 and 1 (docs/api.md, "Transfers and activity": deduplicate on all three).
    const range = [
      { transaction_hash: `0x${'ab'.repeat(32)}`, log_index: 3, batch_index: 0, token_id: '100' },
      { transaction_hash: `0x${'ab'.repeat(32)}`, log_index: 3, batch_index: 1, token_id: '101' },
    ]
    expect(new Set(range.map(idOf)).size).toBe(2)
  })
})
