/**
 * The portal's token view (docs/portal.md, "Token view") under chain text anyone can write: the
 * hostile collection of e2e/explorer-hostile.spec.ts (e2e/helpers/hostile-text.ts), looked up
 * signed in. A name with nothing visible gets a heading and an image text that can be read, a
 * bidi override in a name or a URI reorders nothing after it, a 1,000-character or stacked
 * (Zalgo) name stays in its box: nothing scrolls sideways at 1280 or 390 px.
 */
import type { Page } from '@playwright/test'
import { seriousViolations } from './helpers/axe'
import { expect, SCREENSHOTS, test } from './helpers/fixtures'
import {
  deployHostileCollection,
  HOSTILE_NAME,
  inReadingOrder,
  RLO,
  sidewaysScroll,
} from './helpers/hostile-text'
import { openPortalTokens } from './helpers/portal'

let hostile: string

test.beforeAll(async ({ request, baseURL }) => {
  test.setTimeout(240_000)
  hostile = (await deployHostileCollection(request, baseURL!)).address
})

/** Looks up token `tokenId` of the hostile collection and waits for the view of it. */
async function lookUp(page: Page, tokenId: string) {
  await page.getByLabel('Collection address').fill(hostile)
  await page.getByLabel('Token id (optional)').fill(tokenId)
  await page.getByRole('button', { name: 'Look up' }).click()
  await expect(page.getByRole('button', { name: 'Look up' })).toBeEnabled({ timeout: 30_000 })
  const shownId = page
    .locator('section')
    .filter({ has: page.locator('#token-heading') })
    .locator('dd code')
  await expect(shownId.first()).toHaveText(tokenId, { timeout: 30_000 })
  await expect(page.getByTestId('metadata-status')).toHaveText('ok')
}

test('the token view shows hostile chain text visible, isolated and contained', async ({ page }) => {
  test.setTimeout(180_000)
  await page.setViewportSize({ width: 1280, height: 800 })
  await openPortalTokens(page)
  const collection = page.locator('#collection-heading')
  const token = page.locator('#token-heading')
  const collectionSection = page.locator('section').filter({ has: collection })
  const tokenSection = page.locator('section').filter({ has: token })

  // Overrides in the collection's name and symbol and in the token's name and description: shown
  // whole, reordering nothing after them.
  await lookUp(page, '1')
  await expect(token).toHaveText(`Spoof${RLO}1234`)
  await expect(collection).toHaveText(HOSTILE_NAME)
  expect.soft(await inReadingOrder(collectionSection, 'Tokens5'), 'after the name and symbol').toBe(true)
  expect.soft(await inReadingOrder(tokenSection, 'Image URL'), 'after the description').toBe(true)
  expect.soft(await inReadingOrder(tokenSection, 'Background colour'), 'after the URLs').toBe(true)
  // The document's URI, in a sentence: the words after it in reading order.
  const fetched = page.getByText(/^As fetched from/)
  await expect(fetched).toContainText(`note=${RLO}spoof`)
  expect.soft(await inReadingOrder(fetched, '(GET /v1/nfts/…/metadata).'), 'after the URI').toBe(true)
  // The document itself, as JSON: the name's closing quote, its comma and the next key in order.
  const json = page.getByTestId('response-json')
  const text = (await json.textContent())!
  const nameEnd = text.indexOf(`Spoof${RLO}1234"`) + `Spoof${RLO}1234`.length
  const afterName = text.slice(nameEnd, text.indexOf(':', nameEnd))
  expect.soft(await inReadingOrder(json, afterName), `${afterName} after the name in the JSON`).toBe(true)
  expect.soft(await sidewaysScroll(page), 'token 1 scrolls sideways').toEqual([0, 0])
  await page.screenshot({ path: `${SCREENSHOTS}/portal-tokens-hostile.png` })

  // Only zero-width characters: the heading and the image's text name the token.
  await lookUp(page, '2')
  await expect.soft(token).toHaveText('Token 2')
  await expect.soft(tokenSection.locator('img')).toHaveAttribute('alt', 'Token 2')
  expect.soft(await seriousViolations(page), 'axe on an invisible name').toEqual([])

  // One letter with 960 combining marks: a heading of ordinary height, nothing sideways.
  await lookUp(page, '4')
  await expect(token).toBeVisible()
  expect.soft((await token.boundingBox())!.height, 'a name of stacked marks').toBeLessThan(200)
  expect.soft(await sidewaysScroll(page), 'token 4 scrolls sideways').toEqual([0, 0])

  // The longest name, one word of 1,000 letters: wrapped in its box.
  await lookUp(page, '3')
  await expect(token).toHaveText('W'.repeat(1000))
  expect.soft(await sidewaysScroll(page), 'token 3 scrolls sideways').toEqual([0, 0])
})
