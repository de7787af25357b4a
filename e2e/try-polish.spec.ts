/**
 * The try-it page's finish: parameter descriptions with code spans (no raw
 * Markdown), inputs of one height that line up, example values read from the
 * live index, the demo limits with correct plurals, and paths and the curl
 * line wrapping at separators on a 390 px phone.
 */
import { expect, SCREENSHOTS, test } from './helpers/fixtures'
import { atSeparator, lineBreaks } from './helpers/line-breaks'

test('descriptions, aligned inputs, live examples, plurals and wrapping', async ({ page }) => {
  await page.goto('/try')
  await page.getByRole('button', { name: /GET\s*\/v1\/collections$/ }).click()

  // ── descriptions render code spans, never backticks ──
  const described = page.locator('[id$="-p-before_timestamp-help"]')
  await expect(described).toContainText('copied from next_page_params')
  await expect(described.locator('code')).toHaveText(['next_page_params', 'before_id'])
  for (const text of await page.getByTestId('param-description').allTextContents()) {
    expect(text).not.toContain('`')
  }

  // ── one height for every input and select; fields of one row line up ──
  const boxes = await page
    .locator('.param-grid')
    .locator('input, select')
    .evaluateAll((els) =>
      els.map((el) => el.getBoundingClientRect()).map((r) => ({ top: r.top, height: r.height })),
    )
  expect(boxes.length).toBeGreaterThanOrEqual(5)
  expect(new Set(boxes.map((b) => b.height)).size).toBe(1)
  const fieldTops = await page
    .locator('.param-grid .param-field')
    .evaluateAll((els) => els.map((el) => Math.round(el.getBoundingClientRect().top)))
  for (let i = 0; i < boxes.length; i++) {
    for (let j = 0; j < boxes.length; j++) {
      if (fieldTops[i] === fieldTops[j]) expect(Math.abs(boxes[i]!.top - boxes[j]!.top)).toBeLessThan(1)
    }
  }

  // ── example values from the live index ──
  await page.getByRole('button', { name: 'Get a demo token' }).click()
  await expect(page.getByTestId('token-countdown')).toBeVisible()
  await page.getByRole('button', { name: /GET\s*\/v1\/nfts\/\{address\}\/\{tokenId\}$/ }).click()
  await expect(page.getByLabel(/^address/)).toHaveValue(/^0x[0-9a-f]{40}$/)
  await expect(page.getByLabel(/^tokenId/)).toHaveValue(/^[0-9]+$/)
  await expect(page.getByTestId('live-examples')).toBeVisible()
  await page.getByRole('button', { name: 'Send request' }).click()
  await expect(page.getByTestId('response').getByTestId('response-status')).toHaveText('200')

  // ── 390 px: paths and curl wrap at separators, the page never scrolls sideways ──
  await page.setViewportSize({ width: 390, height: 844 })
  await page.getByRole('button', { name: /GET\s*\/v1\/nfts\/\{address\}\/\{tokenId\}\/transfers$/ }).click()
  await expect(page.getByLabel(/^address/)).toHaveValue(/^0x[0-9a-f]{40}$/)
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390)
  // An answer's headers (a long ETag, the request id) wrap inside the column too.
  await page.getByRole('button', { name: /GET\s*\/v1\/nfts\/\{address\}\/\{tokenId\}$/ }).click()
  await page.getByRole('button', { name: 'Send request' }).click()
  await expect(page.getByTestId('response').getByTestId('response-status')).toHaveText('200')
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390)
  await page.getByRole('button', { name: /GET\s*\/v1\/nfts\/\{address\}\/\{tokenId\}\/transfers$/ }).click()
  for (const path of await page.locator('.endpoint-list .path, .endpoint-title .path').all()) {
    for (const b of await lineBreaks(path)) expect(atSeparator(b), JSON.stringify(b)).toBe(true)
  }
  // In the curl block only a long token or hex string may break where it must.
  for (const b of await lineBreaks(page.getByTestId('curl'))) {
    // A token is base64url (letters, digits, "-", "_"); an address is hex.
    const run = `${/[\w-]*$/.exec(b.before)?.[0]}${/^[\w-]*/.exec(b.after)?.[0]}`
    const inLongRun = run.length >= 16
    expect(atSeparator(b) || inLongRun, JSON.stringify(b)).toBe(true)
  }
  await page.screenshot({ path: `${SCREENSHOTS}/try-mobile.png`, fullPage: true })
  await page.setViewportSize({ width: 1280, height: 720 })

  // ── a 429 names the limits with correct plurals ──
  await page.route('**/v1/activity*', (route) =>
    route.fulfill({
      status: 429,
      contentType: 'application/json',
      headers: { 'Retry-After': '1' },
      body: JSON.stringify({
        error: { code: 'RATE_LIMITED', message: 'Rate limit exceeded.', request_id: 'x' },
      }),
    }),
  )
  await page.getByRole('button', { name: /GET\s*\/v1\/activity$/ }).click()
  await page.getByRole('button', { name: 'Send request' }).click()
  await expect(page.getByTestId('response').getByRole('alert')).toContainText(
    'at most 1 request per second, 30 per minute and 2 at a time',
  )
})
