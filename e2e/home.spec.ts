import { expect, test } from '@playwright/test'

test('home page shows the service and the live index status', async ({ page }) => {
  await page.goto('/')
  await expect(page.getByRole('heading', { level: 1 })).toBeVisible()
  await expect(page.getByRole('link', { name: 'Docs' }).first()).toBeVisible()
  await expect(page.getByRole('link', { name: 'Try it' }).first()).toBeVisible()
  await expect(page.getByRole('link', { name: 'Portal' }).first()).toBeVisible()
  // The indexer follows the devnet: the observed head advances.
  const head = page.getByTestId('last-seen-block')
  await expect(head).toBeVisible()
  const first = BigInt((await head.textContent()) ?? '0')
  await expect
    .poll(async () => BigInt((await page.reload().then(() => head.textContent())) ?? '0'), {
      timeout: 45_000,
    })
    .toBeGreaterThan(first)
  await page.screenshot({ path: 'e2e/artifacts/screenshots/home.png', fullPage: true })
})

test('OpenAPI document is served', async ({ request }) => {
  const res = await request.get('/openapi.json')
  expect(res.status()).toBe(200)
  const doc = await res.json()
  expect(doc.openapi).toMatch(/^3\.1/)
  expect(Object.keys(doc.paths)).toContain('/v1/indexer/status')
})
