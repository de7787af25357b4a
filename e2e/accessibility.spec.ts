/**
 * Accessibility: axe-core on every page, signed out and signed in, on a
 * desktop and a 390 px phone, with no serious or critical violation; and the
 * whole key lifecycle done with the keyboard alone. Screenshots of each page
 * go to the screenshots directory.
 */
import type { Locator, Page } from '@playwright/test'
import { seriousViolations } from './helpers/axe'
import { expect, SCREENSHOTS, test } from './helpers/fixtures'

const VIEWPORTS = [
  { name: 'desktop', width: 1280, height: 800 },
  { name: 'mobile', width: 390, height: 844 },
] as const

async function checkPage(page: Page, path: string, shot: string, ready: () => Promise<void>) {
  for (const viewport of VIEWPORTS) {
    await page.setViewportSize(viewport)
    await page.goto(path)
    await ready()
    expect(await seriousViolations(page), `${path} at ${viewport.width}px`).toEqual([])
    await page.screenshot({ path: `${SCREENSHOTS}/a11y-${shot}-${viewport.name}.png`, fullPage: true })
  }
}

/** Presses Tab until `target` has the focus: how a keyboard user gets there. */
async function tabTo(page: Page, target: Locator, maxPresses = 200) {
  for (let i = 0; i < maxPresses; i++) {
    if (await target.evaluate((el) => el === document.activeElement).catch(() => false)) return
    await page.keyboard.press('Tab')
  }
  throw new Error(`Tab never reached ${target}`)
}

test('every page has no serious or critical axe violation, signed out and signed in', async ({ page }) => {
  test.setTimeout(420_000)
  const h1 = (name: string | RegExp) => () =>
    expect(page.getByRole('heading', { level: 1, name })).toBeVisible()
  await checkPage(page, '/', 'home', h1(/ERC-721 data/))
  await checkPage(page, '/try', 'try', h1('Try the API'))
  await checkPage(page, '/explore', 'explore', async () => {
    await expect(page.getByRole('heading', { level: 1, name: 'Explore collections' })).toBeVisible()
    await expect(page.getByTestId('collection-card').first()).toBeVisible({ timeout: 20_000 })
  })
  await checkPage(page, '/portal', 'portal-signed-out', async () => {
    await expect(page.getByRole('button', { name: 'Sign in with the development wallet' })).toBeVisible()
  })
  await checkPage(page, '/no/such/page', 'not-found', h1('Page not found'))

  await page.setViewportSize(VIEWPORTS[0])
  await page.goto('/portal')
  await page.getByRole('button', { name: 'Sign in with the development wallet' }).click()
  await expect(page.getByRole('heading', { name: 'API keys', level: 1 })).toBeVisible()
  await checkPage(page, '/portal', 'portal-keys', h1('API keys'))
  await checkPage(page, '/portal/audit', 'portal-audit', async () => {
    await expect(page.getByTestId('audit-row').first()).toBeVisible()
  })
})

test('the docs page, Swagger UI included, has no serious or critical axe violation', async ({ page }) => {
  test.setTimeout(120_000)
  await checkPage(page, '/docs', 'docs', async () => {
    await expect(page.getByTestId('api-reference').locator('.opblock').first()).toBeVisible({
      timeout: 20_000,
    })
  })
})

test('the whole key lifecycle by keyboard alone', async ({ page, context, baseURL }) => {
  test.setTimeout(120_000)
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: baseURL! })
  const name = `keyboard ${Date.now()}`
  await page.goto('/portal')

  // Sign in with the development wallet.
  await tabTo(page, page.getByRole('button', { name: 'Sign in with the development wallet' }))
  await page.keyboard.press('Enter')
  await expect(page.getByRole('heading', { name: 'API keys', level: 1 })).toBeVisible()

  // Create: the dialog opens on the name field; Enter submits.
  await tabTo(page, page.getByRole('button', { name: 'Create key' }).first())
  await page.keyboard.press('Enter')
  const create = page.getByRole('dialog', { name: 'Create an API key' })
  await expect(create.getByLabel('Name')).toBeFocused()
  await page.keyboard.type(name)
  await page.keyboard.press('Enter')

  // Reveal and copy the secret, then close the dialog.
  const reveal = page.getByRole('dialog', { name: 'Your new API key' })
  const secret = await reveal.getByTestId('new-secret').inputValue()
  await expect(reveal.getByTestId('new-secret')).toBeFocused()
  await tabTo(page, reveal.getByRole('button', { name: 'Copy secret' }))
  await page.keyboard.press('Enter')
  await expect(reveal.getByRole('button', { name: /Copied/ })).toBeVisible()
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secret)
  await tabTo(page, reveal.getByRole('button', { name: 'I have stored the secret' }))
  await page.keyboard.press('Enter')
  const row = page.getByTestId('key-row').filter({ hasText: name })
  await expect(row).toBeVisible()

  // Rotate, the old secret stopping now.
  await tabTo(page, row.getByRole('button', { name: `Rotate ${name}` }))
  await page.keyboard.press('Enter')
  const rotate = page.getByRole('dialog', { name: `Rotate “${name}”` })
  await expect(rotate.getByRole('radio', { name: /^Now/ })).toBeFocused()
  await tabTo(page, rotate.getByRole('button', { name: 'Rotate key' }))
  await page.keyboard.press('Enter')
  const rotated = page.getByRole('dialog', { name: 'The new secret' })
  expect(await rotated.getByTestId('new-secret').inputValue()).not.toBe(secret)
  await tabTo(page, rotated.getByRole('button', { name: 'I have stored the secret' }))
  await page.keyboard.press('Enter')

  // Revoke: the dialog's default button keeps the key; the next one revokes.
  await tabTo(page, row.getByRole('button', { name: `Revoke ${name}` }))
  await page.keyboard.press('Enter')
  const revoke = page.getByRole('dialog', { name: `Revoke “${name}”?` })
  await expect(revoke.getByRole('button', { name: 'Keep the key' })).toBeFocused()
  await page.keyboard.press('Tab')
  await expect(revoke.getByRole('button', { name: 'Revoke key' })).toBeFocused()
  await page.keyboard.press('Enter')
  await expect(page.getByRole('table', { name: 'Revoked keys' }).getByText(name)).toBeVisible()
})
