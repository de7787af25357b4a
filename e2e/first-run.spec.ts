/**
 * What a newcomer meets on a first visit: on a phone, choosing an endpoint on
 * /try brings its form into view; a request sent from a cursor is not called
 * "page 1"; an audit trail emptied by its filters offers to clear them; the
 * OpenAPI document's licence link leads to the licence, not back to the guide.
 */
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { expect, test } from './helpers/fixtures'
import { E2E_WALLET_NAME, injectWallet } from './helpers/wallet'

test('on a phone, choosing an endpoint on /try scrolls to its form', async ({ page }) => {
  await page.setViewportSize({ width: 390, height: 844 })
  await page.goto('/try')
  const endpoint = page.getByRole('button', { name: /GET\s*\/v1\/nfts\/\{address\}\/\{tokenId\}$/ })
  await endpoint.scrollIntoViewIfNeeded()
  await endpoint.click()
  const title = page.locator('h2.endpoint-title')
  await expect(title).toContainText('{tokenId}')
  await expect(title).toBeInViewport()
})

test('/try numbers pages only from the first one, never a request sent from a cursor', async ({ page }) => {
  await page.goto('/try')
  await page.getByRole('button', { name: 'Get a demo token' }).click()
  await expect(page.getByTestId('token-countdown')).toBeVisible()
  await page.getByRole('button', { name: /GET\s*\/v1\/collections$/ }).click()
  await page.getByLabel(/^limit/).fill('1')
  const send = page.getByRole('button', { name: 'Send request' })
  await send.click()
  const response = page.getByTestId('response')
  await expect(response.getByTestId('response-status')).toHaveText('200')
  await expect(response.getByRole('heading')).toContainText('page 1')
  await response.getByRole('button', { name: 'Next page →' }).click()
  await expect(response.getByRole('heading')).toContainText('page 2')
  // The form holds the cursor now: sending it again is not the first page.
  await expect(send).toBeEnabled({ timeout: 5_000 })
  await send.click()
  await expect(response.getByRole('heading')).toContainText('a page after the cursor sent')
  await expect(response.getByRole('heading')).not.toContainText(/page \d/)
})

test('an audit trail emptied by its filters offers to clear them', async ({ page }) => {
  await injectWallet(page, { signer: privateKeyToAccount(generatePrivateKey()) })
  await page.goto('/portal')
  await page.getByRole('button', { name: `Sign in with ${E2E_WALLET_NAME}` }).click()
  await expect(page.getByRole('heading', { name: 'API keys', level: 1 })).toBeVisible()
  await page.getByRole('link', { name: 'Audit trail' }).click()
  await expect(page.getByTestId('audit-row')).toHaveCount(1)
  // A new account has revoked nothing.
  await page.getByLabel('Action').selectOption({ label: 'Key revoked' })
  await expect(page.getByText('No events match these filters.')).toBeVisible()
  await page.getByRole('button', { name: 'Clear filters' }).click()
  await expect(page.getByLabel('Action')).toHaveValue('')
  await expect(page.getByTestId('audit-row')).toHaveCount(1)
})

test("the OpenAPI document's licence link leads to the licence", async ({ page, request, baseURL }) => {
  const doc = (await (await request.get('/openapi.json')).json()) as {
    info: { license: { name: string; url: string } }
  }
  const { url } = doc.info.license
  expect(new URL(url).pathname + new URL(url).hash).not.toBe('/docs')
  await page.goto(url.replace(new URL(url).origin, baseURL!))
  const heading = page.getByRole('heading', { name: 'Licence', level: 2 })
  await expect(heading).toBeInViewport()
  await expect(page.locator(new URL(url).hash)).toContainText(doc.info.license.name.toLowerCase())
})
