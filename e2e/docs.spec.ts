/** The docs: the guide and the API reference rendered from /openapi.json, offline. */
import { expect, SCREENSHOTS, test } from './helpers/fixtures'

test('docs show the guide and the OpenAPI reference', async ({ page }) => {
  await page.goto('/docs')
  await expect(page.getByRole('heading', { name: 'Docs', level: 1 })).toBeVisible()
  for (const heading of [
    'Authentication',
    'Scopes',
    'Pagination',
    'Polling for new events',
    'Errors and retries',
    'TypeScript client',
    'ERC-1155',
    'Ownership views (extension)',
  ]) {
    await expect(page.getByRole('heading', { name: heading, level: 2 })).toBeVisible()
  }
  await expect(page.getByText('media_url when present', { exact: false })).toBeVisible()
  await expect(
    page.locator('#erc1155').getByText('/v1/nfts/{address}/{tokenId}/owners').first(),
  ).toBeVisible()
  await expect(page.locator('#ownership').getByText('/v1/collections/{address}/owners').first()).toBeVisible()
  // The client is the package, installed from the repository, not a path inside it.
  const client = page.locator('#client')
  await expect(client.getByText("from '@nft-data-service/client'", { exact: false })).toBeVisible()
  await expect(client.getByText('npm pack ./src/client', { exact: false })).toBeVisible()
  await expect(client.getByText("from '@/client'", { exact: false })).toHaveCount(0)
  const reference = page.getByTestId('api-reference')
  await expect(reference.locator('.opblock').first()).toBeVisible({ timeout: 20_000 })
  await expect(reference.getByText('/v1/collections/{address}/nfts').first()).toBeVisible()
  expect(await reference.locator('.opblock').count()).toBeGreaterThanOrEqual(8)
  await page.screenshot({ path: `${SCREENSHOTS}/docs.png`, fullPage: true })
})

test('no page asks another host for anything', async ({ page }) => {
  // The auto fixture fails the test on any foreign request; visit every page.
  for (const path of ['/', '/docs', '/try', '/portal', '/portal/audit']) {
    await page.goto(path)
    await page.waitForLoadState('networkidle')
  }
  await page.setViewportSize({ width: 390, height: 844 })
  await page.goto('/')
  await page.screenshot({ path: `${SCREENSHOTS}/home-mobile.png`, fullPage: true })
})
