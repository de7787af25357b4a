/** The 404 page in the app's theme, and the favicon, through the real server. */
import { expect, SCREENSHOTS, test } from './helpers/fixtures'

test('an unknown path answers 404 with a styled page that leads on', async ({ page }) => {
  const res = await page.goto('/no/such/page')
  expect(res?.status()).toBe(404)
  await expect(page.getByRole('heading', { name: 'Page not found', level: 1 })).toBeVisible()
  await expect(page).toHaveTitle(/Page not found/)
  // The site's own frame: header navigation and the theme's background.
  await expect(page.getByRole('navigation', { name: 'Main' })).toBeVisible()
  expect(await page.evaluate(() => getComputedStyle(document.body).backgroundColor)).toBe('rgb(11, 13, 18)')
  await page.getByRole('main').getByRole('link', { name: 'Docs' }).click()
  await expect(page).toHaveURL(/\/docs$/)
  await page.goto('/no/such/page')
  await page.screenshot({ path: `${SCREENSHOTS}/not-found.png`, fullPage: true })
  await page.setViewportSize({ width: 390, height: 844 })
  await page.screenshot({ path: `${SCREENSHOTS}/not-found-mobile.png`, fullPage: true })
})

test('/favicon.ico is an icon', async ({ request }) => {
  const res = await request.get('/favicon.ico')
  expect(res.status()).toBe(200)
  expect(res.headers()['content-type']).toMatch(/^image\//)
  const bytes = await res.body()
  // An ICO directory (reserved 0, type 1) with at least one image.
  expect([...bytes.subarray(0, 4)]).toEqual([0, 0, 1, 0])
  expect(bytes.readUInt16LE(4)).toBeGreaterThan(0)
})
