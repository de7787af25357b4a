/**
 * The portal's token view (docs/portal.md, "Token view"), signed in with the
 * development wallet on the service's own devnet: a token with a whole
 * document shows its fields, attributes and the document as fetched; "Refresh
 * token" is accepted once and limited the second time, with the wait; the
 * audit trail lists the refresh; axe finds nothing serious at 1280 and 390 px.
 */
import type { APIRequestContext } from '@playwright/test'
import { seriousViolations } from './helpers/axe'
import { expect, SCREENSHOTS, test } from './helpers/fixtures'
import { openPortalTokens } from './helpers/portal'

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

interface Nft {
  collection_address: string
  token_id: string
  name?: string
  metadata_status?: string
  description?: string
  attributes?: Array<{ trait_type: string; value: unknown }>
  external_url?: string
}

/** A token whose document has a description and attributes, found through /v1 with a demo token (paced). */
async function tokenWithDocument(request: APIRequestContext): Promise<Nft> {
  const issued = await request.post('/v1/demo-token')
  expect(issued.status()).toBe(200)
  const token = ((await issued.json()) as { data: { token: string } }).data.token
  const get = async <T>(path: string): Promise<T> => {
    await sleep(1_100)
    const res = await request.get(path, { headers: { Authorization: `Bearer ${token}` } })
    expect(res.status(), path).toBe(200)
    return ((await res.json()) as { data: T }).data
  }
  const deadline = Date.now() + 120_000
  while (Date.now() < deadline) {
    const collections = await get<Array<{ contract_address: string }>>('/v1/collections?limit=10')
    for (const c of collections) {
      const nfts = await get<Nft[]>(
        `/v1/collections/${c.contract_address}/nfts?include_metadata=true&limit=20`,
      )
      // Its external URL, when it has one, a web link (the hostile collection's tokens, which
      // other specs deploy, have a `javascript:` one: e2e/tokens-hostile.spec.ts looks at those).
      const found = nfts.find(
        (n) =>
          n.metadata_status === 'ok' &&
          n.description &&
          n.attributes?.length &&
          (!n.external_url || /^https?:\/\//.test(n.external_url)),
      )
      if (found) return found
    }
  }
  throw new Error('no token with a whole document on the devnet')
}

test('the token view shows the whole document, and a refresh is accepted, then limited', async ({
  page,
  request,
}) => {
  test.setTimeout(300_000)
  const nft = await tokenWithDocument(request)

  await page.setViewportSize({ width: 1280, height: 800 })
  await openPortalTokens(page)

  // Bad input is caught on the page, the field named and focused.
  await page.getByLabel('Collection address').fill('0x123')
  await page.getByRole('button', { name: 'Look up' }).click()
  await expect(page.getByText('Enter a contract address')).toBeVisible()
  await expect(page.getByLabel('Collection address')).toBeFocused()

  await page.getByLabel('Collection address').fill(nft.collection_address)
  await page.getByLabel('Token id (optional)').fill(nft.token_id)
  await page.getByLabel('Token id (optional)').press('Enter')
  const details = page.locator('section').filter({ has: page.locator('#token-heading') })
  await expect(page.locator('#token-heading')).toHaveText(nft.name ?? `Token ${nft.token_id}`, {
    timeout: 30_000,
  })
  await expect(page.getByTestId('metadata-status')).toHaveText('ok')
  await expect(page.getByTestId('token-description')).toHaveText(nft.description!)
  await expect(page.getByTestId('metadata-updated')).not.toHaveText('—')
  const rows = details.getByRole('table').getByRole('row')
  await expect(rows).toHaveCount(nft.attributes!.length + 1)
  await expect(details.getByRole('table')).toContainText(String(nft.attributes![0]!.trait_type))
  if (nft.external_url) {
    const link = page.getByTestId('external-url')
    await expect(link).toHaveAttribute('rel', 'noopener noreferrer nofollow')
    await expect(link).toHaveAttribute('href', nft.external_url)
  }
  // The document as fetched, as text: never rendered as HTML.
  const fetched = page.getByTestId('response-json')
  await expect(fetched).toContainText('"attributes"')
  expect(await fetched.locator('*:not(code):not(span)').count()).toBe(0)

  expect(await seriousViolations(page), 'token view at 1280 px').toEqual([])
  await page.screenshot({ path: `${SCREENSHOTS}/portal-tokens-desktop.png`, fullPage: true })

  await page.getByRole('button', { name: 'Refresh token' }).click()
  await expect(page.getByTestId('refresh-outcome')).toContainText('Refresh of the token accepted')
  await page.getByRole('button', { name: 'Refresh token' }).click()
  await expect(page.getByTestId('refresh-outcome')).toContainText('Limited')
  await expect(page.getByTestId('refresh-outcome')).toContainText(/Try again in \d+ (s|min)/)
  // The view reads the token again after an accepted refresh: still there, still ok.
  await expect(page.getByTestId('metadata-status')).toHaveText('ok', { timeout: 30_000 })

  await page.setViewportSize({ width: 390, height: 844 })
  expect(await seriousViolations(page), 'token view at 390 px').toEqual([])
  expect(
    await page.evaluate(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth),
  ).toBe(true)
  await page.screenshot({ path: `${SCREENSHOTS}/portal-tokens-mobile.png`, fullPage: true })

  await page.setViewportSize({ width: 1280, height: 800 })
  await page.getByRole('navigation', { name: 'Portal' }).getByRole('link', { name: 'Audit trail' }).click()
  await expect(
    page.getByRole('rowheader', { name: `Token refresh token ${nft.token_id} of ${nft.collection_address}` }),
  ).toBeVisible()
})
