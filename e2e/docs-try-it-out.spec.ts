/**
 * The API reference on /docs calls this service: one click authorizes Swagger UI
 * with a demo token, and "Try it out" → "Execute" shows live data.
 */
import { seriousViolations } from './helpers/axe'
import { expect, SCREENSHOTS, test } from './helpers/fixtures'

test('the API reference executes GET /v1/collections with a demo token', async ({ page }) => {
  await page.goto('/docs')
  const reference = page.getByTestId('api-reference')
  await expect(reference.locator('.opblock').first()).toBeVisible({ timeout: 20_000 })

  await page.getByRole('button', { name: 'Use a demo token' }).click()
  await expect(page.getByTestId('reference-auth-status')).toContainText('Authorized with demo token')

  const operation = reference.locator('.opblock.opblock-get', {
    has: page.locator('.opblock-summary-path[data-path="/v1/collections"]'),
  })
  await operation.locator('.opblock-summary-control').click()
  await operation.getByRole('button', { name: 'Try it out' }).click()
  const answer = page.waitForResponse(
    (res) => new URL(res.url()).pathname === '/v1/collections' && res.request().method() === 'GET',
  )
  await operation.getByRole('button', { name: 'Execute' }).click()

  // The request carried the demo token and the service answered with data.
  const response = await answer
  expect(response.status()).toBe(200)
  expect(response.request().headers().authorization).toMatch(/^Bearer \S+$/)

  // The page shows the 200 and the JSON body.
  const live = operation.locator('.live-responses-table')
  await expect(live.locator('tbody .response-col_status').first()).toHaveText('200')
  const body = await live.locator('tbody .response-col_description .microlight').first().textContent()
  const json = JSON.parse(body ?? '') as { data: unknown[]; pagination: { limit: number } }
  expect(Array.isArray(json.data)).toBe(true)
  expect(json.pagination.limit).toBe(20)
  await page.screenshot({ path: `${SCREENSHOTS}/docs-try-it-out.png`, fullPage: true })

  // The opened operation, its form and its response pass axe too.
  expect(await seriousViolations(page, { include: '[data-testid="api-reference"]' })).toEqual([])
})
