/**
 * Usage and scopes of a key in the portal: sign in with the development
 * wallet, create a key, call the API a few times (2xx and 4xx), see the calls
 * in the key's usage chart, then take a scope away in the edit form and see
 * the API refuse it (403) and the change in the audit trail.
 */
import { request as playwrightRequest } from '@playwright/test'
import { expect, SCREENSHOTS, test } from './helpers/fixtures'
import { createKeyInPortal } from './helpers/portal'

test('edit a key’s scopes and see its usage chart after a few API calls', async ({ page, baseURL }) => {
  test.setTimeout(120_000)
  const api = await playwrightRequest.newContext({ baseURL })
  await page.goto('/portal')
  await page.getByRole('button', { name: 'Sign in with the development wallet' }).click()
  await expect(page.getByRole('heading', { name: 'API keys', level: 1 })).toBeVisible()

  const name = `usage ${Date.now()}`
  const secret = await createKeyInPortal(page, name)

  const call = async (path: string) =>
    (await api.get(path, { headers: { Authorization: `Bearer ${secret}` } })).status()
  expect(await call('/v1/indexer/status')).toBe(200)
  expect(await call('/v1/collections?limit=1')).toBe(200)
  expect(await call('/v1/collections?limit=1')).toBe(200)
  expect(await call('/v1/collections?limit=0')).toBe(400)

  // ── usage: counted in memory, in the chart once flushed (every 10 s) ──
  const row = page.getByTestId('key-row').filter({ hasText: name })
  const prefix = await row.getByTestId('key-prefix').textContent()
  const usage = page.getByTestId('usage-panel')
  await expect(async () => {
    await page.reload()
    await usage.getByLabel('Key').selectOption({ label: `${name} (${prefix})` })
    await expect(usage.getByTestId('usage-total-ok')).toHaveText('3', { timeout: 2_000 })
  }).toPass({ timeout: 45_000 })
  await expect(usage.getByTestId('usage-total-client_error')).toHaveText('1')
  await expect(usage.getByTestId('usage-total-rate_limited')).toHaveText('0')
  await expect(usage.getByTestId('usage-total-rate_limited_ip')).toHaveText('0')
  const chart = usage.getByRole('img', {
    name: /Requests per hour of .* 3 2xx, 1 4xx, 0 429 key limit, 0 429 IP limit, 0 5xx/,
  })
  await expect(chart).toBeVisible()
  await expect(chart.locator('rect')).toHaveCount(2)
  await usage.getByText('Requests per hour as a table').click()
  await expect(usage.getByTestId('usage-table').locator('tbody tr')).toHaveCount(1)
  await page.screenshot({ path: `${SCREENSHOTS}/portal-key-usage.png`, fullPage: true })

  // ── edit: take read:status away ──
  await row.getByRole('button', { name: `Edit ${name}` }).click()
  const edit = page.getByRole('dialog', { name: `Edit “${name}”` })
  await edit.getByRole('checkbox', { name: /read:status/ }).uncheck()
  await edit.getByLabel('Allowed origins (optional)').fill('not an origin')
  await edit.getByRole('button', { name: 'Save changes' }).click()
  await expect(edit.getByText('is not an origin')).toBeVisible()
  await edit.getByLabel('Allowed origins (optional)').fill('https://app.example.com')
  await edit.getByRole('button', { name: 'Save changes' }).click()
  await expect(edit).toBeHidden()
  await expect(row.getByRole('list', { name: 'Scopes' })).not.toContainText('read:status')
  await expect(row).toContainText('https://app.example.com')

  // Within the credential cache's bound (≤ 1 s) the removed scope is refused.
  await expect.poll(() => call('/v1/indexer/status'), { timeout: 5_000 }).toBe(403)
  expect(await call('/v1/collections?limit=1')).toBe(200)

  await page.getByRole('link', { name: 'Audit trail' }).click()
  await page.getByLabel('Action').selectOption('key_updated')
  const updated = page.getByTestId('audit-row').first()
  await expect(updated).toHaveAttribute('data-action', 'key_updated')
  await expect(updated).toContainText('origins: none → https://app.example.com')
  await api.dispose()
})
