/**
 * The try-it page: a demo token with its countdown and limits, parameters
 * checked like the API checks them, the response with its rate-limit headers,
 * next_page_params followed in one click, and the equivalent curl command.
 */
import { expect, SCREENSHOTS, test } from './helpers/fixtures'

test('get a demo token and page through collections with one click', async ({ page }) => {
  const apiCalls: string[] = []
  page.on('request', (r) => {
    if (new URL(r.url()).pathname.startsWith('/v1/'))
      apiCalls.push(`${r.method()} ${new URL(r.url()).pathname}`)
  })
  await page.goto('/try')
  await expect(page.getByRole('heading', { name: 'Try the API', level: 1 })).toBeVisible()
  const send = page.getByRole('button', { name: 'Send request' })
  await expect(send).toBeDisabled()

  // Keyboard only: the token button is reachable and works with Enter.
  const getToken = page.getByRole('button', { name: 'Get a demo token' })
  await getToken.focus()
  await page.keyboard.press('Enter')
  await expect(page.getByTestId('token-countdown')).toHaveText(/^1[45]:\d\d/)
  await expect(page.getByTestId('demo-token')).toHaveText(/^demo_/)
  await expect(page.getByText('1/s · 30/min · 2 at a time')).toBeVisible()

  await page.getByRole('button', { name: /GET\s*\/v1\/collections$/ }).click()
  const limit = page.getByLabel(/^limit/)

  // The API's own rule, checked before any request is spent.
  await limit.fill('500')
  const before = apiCalls.length
  await send.click()
  await expect(page.getByText('limit must be at most 100')).toBeVisible()
  await expect(limit).toBeFocused()
  expect(apiCalls.length).toBe(before)

  await limit.fill('1')
  await expect(page.getByTestId('curl')).toContainText("curl -i 'http://")
  await expect(page.getByTestId('curl')).toContainText('/v1/collections?limit=1')
  await expect(page.getByTestId('curl')).toContainText('Authorization: Bearer demo_')
  await limit.press('Enter')
  const response = page.getByTestId('response')
  await expect(response.getByTestId('response-status')).toHaveText('200')
  await expect(response).toContainText('page 1')
  await expect(response.getByRole('row', { name: /ratelimit-policy/i })).toBeVisible()
  await expect(response.getByRole('row', { name: /x-request-id/i })).toBeVisible()
  const first = JSON.parse((await response.getByTestId('response-json').textContent()) ?? 'null')
  expect(first.data).toHaveLength(1)
  expect(first.pagination.has_more).toBe(true)
  await page.screenshot({ path: `${SCREENSHOTS}/try.png`, fullPage: true })

  // One click follows next_page_params.
  await response.getByRole('button', { name: 'Next page →' }).click()
  await expect(response).toContainText('page 2')
  await expect(response.getByTestId('response-status')).toHaveText('200')
  const second = JSON.parse((await response.getByTestId('response-json').textContent()) ?? 'null')
  expect(second.data).toHaveLength(1)
  expect(second.data[0].contract_address).not.toBe(first.data[0].contract_address)
  for (const [key, value] of Object.entries(first.pagination.next_page_params)) {
    await expect(page.getByLabel(new RegExp(`^${key}`))).toHaveValue(String(value))
  }
  await expect(page.getByTestId('curl')).toContainText('before_timestamp=')
  expect(apiCalls.filter((c) => c === 'GET /v1/collections')).toHaveLength(2)
})

test('a 429 is explained, with when to retry', async ({ page }) => {
  await page.goto('/try')
  await page.getByRole('button', { name: 'Get a demo token' }).click()
  await expect(page.getByTestId('token-countdown')).toBeVisible()
  // The limiter's answer, as the API gives it (a real one needs a burst the page itself avoids).
  await page.route('**/v1/activity*', (route) =>
    route.fulfill({
      status: 429,
      contentType: 'application/json',
      headers: {
        'Retry-After': '3',
        'RateLimit-Reset': '3',
        'RateLimit-Policy': '"sec";q=1;w=1, "min";q=30;w=60',
        RateLimit: '"min";r=0;t=3',
      },
      body: JSON.stringify({
        error: { code: 'RATE_LIMITED', message: 'Rate limit exceeded.', request_id: 'x' },
      }),
    }),
  )
  await page.getByRole('button', { name: /GET\s*\/v1\/activity$/ }).click()
  await page.getByRole('button', { name: 'Send request' }).click()
  const response = page.getByTestId('response')
  await expect(response.getByTestId('response-status')).toHaveText('429')
  await expect(response.getByRole('alert')).toContainText('Retry-After')
  await expect(response.getByRole('alert')).toContainText('backoff')
  await expect(page.getByRole('button', { name: 'Send request' })).toBeDisabled()
  await expect(page.getByText(/You can send again in 0:0[1-3]/)).toBeVisible()
  await page.screenshot({ path: `${SCREENSHOTS}/try-429.png`, fullPage: true })
  await expect(page.getByRole('button', { name: 'Send request' })).toBeEnabled({ timeout: 6_000 })
})
