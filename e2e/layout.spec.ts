/**
 * Every page fits its width at 390, 1024 and 1440 px, signed in with a key in
 * every state (never used; used, with a few scopes, long origins and an old
 * secret in its grace period; revoked): measured boxes, not pixel snapshots.
 * Nothing scrolls sideways — not the page, not a card, not a table — every
 * button lies inside its card, and a phone's stacked table cells keep their
 * content beside the label column, never under it.
 */
import type { Page } from '@playwright/test'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { expect, SCREENSHOTS, test } from './helpers/fixtures'
import { createKeyInPortal } from './helpers/portal'
import { E2E_WALLET_NAME, injectWallet } from './helpers/wallet'

const WIDTHS = [390, 1024, 1440]
const PAGES = ['/', '/docs', '/try', '/explore', '/portal', '/portal/audit']

/** Boxes that scroll sideways or stick out, described; empty when the page fits. */
function overflows(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const problems: string[] = []
    const name = (el: Element) =>
      `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ''}.${[...el.classList].join('.')} "${(el.textContent ?? '').trim().slice(0, 30)}"`
    const visible = (el: Element) => el.getClientRects().length > 0
    const root = document.documentElement
    if (root.scrollWidth > root.clientWidth)
      problems.push(`page ${root.scrollWidth} > ${root.clientWidth} px`)
    const cards = [
      ...document.querySelectorAll('main .panel, main .table-wrap, main table, main form, main section'),
    ]
    for (const card of cards.filter(visible)) {
      if (card.scrollWidth > card.clientWidth + 1)
        problems.push(`${name(card)} scrolls: ${card.scrollWidth} > ${card.clientWidth} px`)
    }
    for (const button of [...document.querySelectorAll('main button, main .button')].filter(visible)) {
      const card = button.parentElement?.closest('.panel, .table-wrap, .dialog, main')
      if (!card) continue
      const b = button.getBoundingClientRect()
      const c = card.getBoundingClientRect()
      if (b.left < c.left - 0.5 || b.right > c.right + 0.5)
        problems.push(`${name(button)} [${Math.round(b.left)}, ${Math.round(b.right)}] outside ${name(card)}`)
    }
    // Stacked cells (a phone) show their label before the content, in a column of its own
    // (a grid's first column, or a box placed in the cell's padding): the content stays beside it.
    for (const cell of document.querySelectorAll('.data-table.responsive [data-label]')) {
      const style = getComputedStyle(cell)
      const label = getComputedStyle(cell, '::before')
      if (label.content === 'none' || label.content === 'normal') continue
      const left = cell.getBoundingClientRect().left
      const labelEnd =
        style.display === 'grid'
          ? left +
            Number.parseFloat(style.paddingLeft) +
            Number.parseFloat(style.gridTemplateColumns.split(' ')[0]!)
          : left + Number.parseFloat(label.left) + Number.parseFloat(label.width)
      for (const child of [...cell.children].filter(visible)) {
        if (child.getBoundingClientRect().left < labelEnd - 0.5)
          problems.push(`${name(child)} under the label column of ${cell.getAttribute('data-label')}`)
      }
    }
    return problems
  })
}

test('every page fits at 390, 1024 and 1440 px with a key in every state', async ({ page }) => {
  test.setTimeout(Math.max(180_000, test.info().timeout))
  await injectWallet(page, { signer: privateKeyToAccount(generatePrivateKey()) })
  await page.goto('/portal')
  await page.getByRole('button', { name: `Sign in with ${E2E_WALLET_NAME}` }).click()
  await expect(page.getByRole('heading', { name: 'API keys', level: 1 })).toBeVisible()

  // Never used, every scope.
  await createKeyInPortal(page, 'fresh key')
  // A few scopes, long origins, used, then rotated with a day's grace: the widest row.
  const wide = 'storefront production backend'
  const secret = await createKeyInPortal(page, wide, {
    uncheck: ['read:owners', 'read:transfers', 'read:status'],
    origins: 'https://storefront.marketplace-example.com\nhttps://staging.storefront.marketplace-example.com',
  })
  const used = await page.request.get('/v1/collections', { headers: { Authorization: `Bearer ${secret}` } })
  expect(used.status()).toBe(200)
  const row = page.getByTestId('key-row').filter({ hasText: wide })
  await row.getByRole('button', { name: `Rotate ${wide}` }).click()
  const rotate = page.getByRole('dialog', { name: `Rotate “${wide}”` })
  await rotate.getByRole('radio', { name: /^After a grace period/ }).check()
  await rotate.getByRole('button', { name: 'Rotate key' }).click()
  await page.getByRole('button', { name: 'I have stored the secret' }).click()
  await expect(row.locator('td[data-label="Status"]')).toContainText(
    /old secret \S+… expires (in 2[34] hours|tomorrow)$/,
  )
  // Revoked.
  await createKeyInPortal(page, 'retired key')
  await page
    .getByTestId('key-row')
    .filter({ hasText: 'retired key' })
    .getByRole('button', { name: 'Revoke retired key' })
    .click()
  await page
    .getByRole('dialog', { name: 'Revoke “retired key”?' })
    .getByRole('button', { name: 'Revoke key' })
    .click()
  await expect(page.getByRole('table', { name: 'Revoked keys' }).getByText('retired key')).toBeVisible()
  await expect
    .poll(async () => {
      await page.reload()
      return page
        .getByTestId('key-row')
        .filter({ hasText: wide })
        .locator('td[data-label="Last used"]')
        .textContent()
    })
    .not.toContain('never')

  const found: string[] = []
  for (const width of WIDTHS) {
    await page.setViewportSize({ width, height: 900 })
    for (const path of PAGES) {
      await page.goto(path)
      await expect(page.locator('main h1').first()).toBeVisible()
      if (path === '/docs')
        await expect(page.getByTestId('api-reference').locator('.opblock').first()).toBeVisible()
      if (path === '/explore')
        await expect(page.getByTestId('collection-card').first()).toBeVisible({ timeout: 20_000 })
      if (path === '/portal') await expect(page.getByTestId('key-row').first()).toBeVisible()
      if (path === '/portal/audit') await expect(page.getByTestId('audit-row').first()).toBeVisible()
      for (const problem of await overflows(page)) found.push(`${path} at ${width} px: ${problem}`)
      await page.screenshot({
        path: `${SCREENSHOTS}/layout-${path.replaceAll('/', '_')}-${width}.png`,
        fullPage: true,
      })
    }
  }
  expect(found).toEqual([])
})
