/**
 * The public API as the browser tests and bench:explorer read it from outside the browser: with a
 * demo token, within its limits (1 request/s, 30/min), and the devnet's demo collections found
 * through it.
 */
import { type APIRequestContext, expect, type Page } from '@playwright/test'

export type DemoToken = { token: string; expires_at: string }
export type Answer<T> = { status: number; body: T; confirmed: number }
type CollectionItem = { contract_address: string; name: string; contract_type: string }

/** The devnet's demo collections (src/dev/devnet). */
export const DEMO_COLLECTIONS = ['Onchain Glyphs', 'Devnet Postcards', 'Genesis Pioneers', 'Devnet Editions']

/**
 * A new demo token, as a first visit gets one. Each test takes its own, so that one test's
 * requests never spend the next one's budget.
 */
export async function issueDemoToken(request: APIRequestContext): Promise<DemoToken> {
  const res = await request.post('/v1/demo-token')
  expect(res.status(), await res.text()).toBe(200)
  return ((await res.json()) as { data: DemoToken }).data
}

/** The browser starts with a token of its own in its tab (as after a first visit). */
export async function withDemoToken(page: Page) {
  const token = await issueDemoToken(page.request)
  await page.addInitScript((token) => {
    if (!sessionStorage.getItem('nft-api-demo-token')) sessionStorage.setItem('nft-api-demo-token', token)
  }, JSON.stringify(token))
}

/**
 * GET with a demo token, spaced to stay within its limits (1/s; a 429 waits for Retry-After):
 * the status, the body and the confirmed block (`X-Confirmed-Block`).
 */
export async function pacedGet<T>(
  request: APIRequestContext,
  demo: DemoToken,
  path: string,
): Promise<Answer<T>> {
  for (let attempt = 0; ; attempt++) {
    await new Promise((r) => setTimeout(r, 1100))
    const res = await request.get(path, { headers: { Authorization: `Bearer ${demo.token}` } })
    if (res.status() === 429 && attempt < 5) {
      await new Promise((r) => setTimeout(r, Number(res.headers()['retry-after'] ?? '1') * 1000))
      continue
    }
    return {
      status: res.status(),
      body: (await res.json()) as T,
      confirmed: Number(res.headers()['x-confirmed-block'] ?? '-1'),
    }
  }
}

/** pacedGet()'s body, which must come with a 200. */
export async function pacedGetOk<T>(request: APIRequestContext, demo: DemoToken, path: string): Promise<T> {
  const answer = await pacedGet<T>(request, demo, path)
  expect(answer.status, `${path}: ${JSON.stringify(answer.body)}`).toBe(200)
  return answer.body
}

/** The collections listed once every demo collection is (the devnet deploys them at start-up). */
export async function demoCollections(
  request: APIRequestContext,
  demo: DemoToken,
): Promise<CollectionItem[]> {
  let collections: CollectionItem[] = []
  await expect
    .poll(
      async () => {
        const list = await pacedGetOk<{ data: CollectionItem[] }>(
          request,
          demo,
          '/v1/collections?standard=all&limit=100',
        )
        collections = list.data
        return DEMO_COLLECTIONS.every((n) => collections.some((c) => c.name === n))
      },
      { timeout: 60_000, intervals: [2000] },
    )
    .toBe(true)
  return collections
}

/** A collection's address by its name. */
export function addressOf(collections: CollectionItem[], name: string): string {
  const c = collections.find((x) => x.name === name)
  if (!c) throw new Error(`no collection ${name}`)
  return c.contract_address
}

/**
 * Waits until more than 50 Genesis Pioneers are alive. The devnet mints and burns Pioneers as it
 * runs (68 minted at the start, mints outweighing burns): a page of 50 needs them, with one to
 * spare for a burn on the way.
 */
export async function untilFullGallery(request: APIRequestContext, demo: DemoToken, pioneers: string) {
  await expect
    .poll(
      async () =>
        (await pacedGetOk<{ data: unknown[] }>(request, demo, `/v1/collections/${pioneers}/nfts?limit=51`))
          .data.length,
      { timeout: 90_000, intervals: [2000] },
    )
    .toBeGreaterThan(50)
}
