/**
 * The explorer (/explore, docs/explorer.md) against the service's own devnet and its demo
 * collections (on-chain data: URIs, the metadata helper's HTTP documents, plain JSON data: URIs,
 * ERC-1155 editions): every page through the public /v1 API with a demo token, artwork only
 * through the media path, at 1280 and 390 px, with axe and no sideways scrolling; the image
 * bytes of each page are printed (how fast pages become usable: `npm run bench:explorer`). A
 * token whose metadata points at a hostile SVG (script, onload, external references) runs
 * nothing and loads nothing in the explorer. Every request to another host fails the test
 * (fixtures.ts).
 */
import type { APIRequestContext, Page, TestInfo } from '@playwright/test'
import { seriousViolations } from './helpers/axe'
import {
  addressOf,
  type DemoToken,
  demoCollections,
  issueDemoToken,
  pacedGet,
  untilFullGallery,
  withDemoToken,
} from './helpers/demo-api'
import { callE2EContract, deployE2EContract } from './helpers/devnet'
import { expect, SCREENSHOTS, test } from './helpers/fixtures'

const VIEWPORTS = [
  { name: '1280', width: 1280, height: 800 },
  { name: '390', width: 390, height: 844 },
] as const

let demo: DemoToken
let collections: Awaited<ReturnType<typeof demoCollections>>

/** A demo token for the test process, and the devnet's collections read with it. */
test.beforeAll(async ({ request }) => {
  test.setTimeout(180_000)
  demo = await issueDemoToken(request)
  collections = await demoCollections(request, demo)
})

/** A paced GET with the test process's demo token (helpers/demo-api.ts). */
const apiAnswer = <T>(request: APIRequestContext, path: string) => pacedGet<T>(request, demo, path)
const collectionNamed = (name: string) => addressOf(collections, name)

/** Genesis Pioneers' address, once more than 50 are alive. */
async function pioneersWithFullPage(request: APIRequestContext): Promise<string> {
  const pioneers = collectionNamed('Genesis Pioneers')
  await untilFullGallery(request, demo, pioneers)
  return pioneers
}

/** Starts a page's count of media bytes (a link followed inside the app keeps the old entries). */
function newPageCount(page: Page) {
  return page.evaluate(() => performance.clearResourceTimings())
}

/**
 * Media-path bytes of the pictures this page shows (encoded, as they came over the wire): the
 * resource entries of the page's current <img> elements (a link followed inside the app leaves
 * the previous page's late pictures in the timeline).
 */
function imageBytes(page: Page): Promise<{ count: number; bytes: number }> {
  return page.evaluate(() => {
    const shown = new Set([...document.images].map((i) => i.currentSrc).filter(Boolean))
    const media = (performance.getEntriesByType('resource') as PerformanceResourceTiming[]).filter(
      (e) => e.name.includes('/v1/media') && shown.has(e.name),
    )
    return { count: media.length, bytes: media.reduce((n, e) => n + e.encodedBodySize, 0) }
  })
}

/** Every picture the page shows comes from the media path; nothing is inlined or embedded. */
async function expectSafeMedia(page: Page) {
  const report = await page.evaluate(() => ({
    imgs: [...document.querySelectorAll('main img')].map((i) => (i as HTMLImageElement).src),
    embedded: document.querySelectorAll('main iframe, main object, main embed, main svg image').length,
    inlineSvg: [...document.querySelectorAll('main svg')].filter((s) => s.closest('.artwork')).length,
  }))
  for (const src of report.imgs) expect(new URL(src).pathname, src).toBe('/v1/media')
  expect(report.embedded).toBe(0)
  expect(report.inlineSvg).toBe(0)
}

/** axe, no sideways scrolling, and a screenshot, at 1280 and 390 px (no reload: the same data). */
async function checkViews(page: Page, testInfo: TestInfo, shot: string) {
  for (const viewport of VIEWPORTS) {
    await page.setViewportSize(viewport)
    await page.waitForTimeout(300)
    expect(await seriousViolations(page), `${shot} at ${viewport.width}px`).toEqual([])
    const overflow = await page.evaluate(
      () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
    )
    expect(overflow, `${shot} scrolls sideways at ${viewport.width}px`).toBeLessThanOrEqual(0)
    const path = testInfo.outputPath(`explorer-${shot}-${viewport.name}.png`)
    await page.screenshot({ path, fullPage: false })
    await page.screenshot({ path: `${SCREENSHOTS}/explorer-${shot}-${viewport.name}.png`, fullPage: false })
    await testInfo.attach(`explorer-${shot}-${viewport.name}`, { path, contentType: 'image/png' })
  }
  await page.setViewportSize(VIEWPORTS[0])
}

test('the first visit gets a demo token; the collection grid lists every demo collection and searches', async ({
  page,
}, testInfo) => {
  test.setTimeout(120_000)
  const tokenRequests: string[] = []
  page.on('request', (r) => {
    if (r.url().endsWith('/v1/demo-token')) tokenRequests.push(r.method())
  })
  await page.goto('/explore')
  await expect(page.getByRole('heading', { level: 1, name: 'Explore collections' })).toBeVisible()
  const grid = page.getByTestId('collection-grid')
  for (const name of ['Onchain Glyphs', 'Devnet Postcards', 'Genesis Pioneers', 'Devnet Editions'])
    await expect(grid.getByRole('link', { name })).toBeVisible()
  // ERC-1155 collections are listed too (standard=all).
  await expect(grid.getByText('ERC-1155').first()).toBeVisible()
  expect(tokenRequests).toEqual(['POST'])
  const stored = await page.evaluate(() => JSON.parse(sessionStorage.getItem('nft-api-demo-token') ?? '{}'))
  expect(stored.token).toMatch(/^demo_/)
  // Covers: each card's first token, through the media path.
  await expect(grid.locator('[data-testid="artwork"][data-state="loaded"]').first()).toBeVisible({
    timeout: 30_000,
  })
  await expectSafeMedia(page)
  await checkViews(page, testInfo, 'collections')
  console.log(`explorer /explore image bytes: ${JSON.stringify(await imageBytes(page))}`)

  await page.getByLabel('Search collections by name').fill('glyph')
  await page.getByRole('button', { name: 'Search' }).click()
  await expect(page).toHaveURL(/\/explore\?search=glyph$/)
  await expect(grid.getByRole('link')).toHaveCount(1)
  await expect(grid.getByRole('link', { name: 'Onchain Glyphs' })).toBeVisible()
  // A reload keeps the tab's token: no second issuance.
  await page.reload()
  await expect(grid.getByRole('link', { name: 'Onchain Glyphs' })).toBeVisible()
  expect(tokenRequests).toEqual(['POST'])
})

test('a collection page of 50 tokens: sized lazy thumbnails, no layout shift; pages, burned tokens and trait filters', async ({
  page,
}, testInfo) => {
  test.setTimeout(180_000)
  await withDemoToken(page)
  const pioneers = await pioneersWithFullPage(page.request)
  // Page renders the browser asks the server for ahead of a click (`_rsc` requests).
  const prefetched: string[] = []
  page.on('request', (r) => {
    const url = new URL(r.url())
    if (url.searchParams.has('_rsc')) prefetched.push(url.pathname)
  })
  // How fast it becomes usable is measured by `npm run bench:explorer` (docs/explorer.md).
  await page.goto(`/explore/collections/${pioneers}`)
  const cards = page.getByTestId('nft-grid').getByTestId('nft-card')
  await expect(cards).toHaveCount(50, { timeout: 15_000 })
  // Thumbnails in the first rows arrive; sizes are reserved, so nothing moves meanwhile.
  await expect(cards.first().locator('[data-testid="artwork"][data-state="loaded"]')).toBeVisible({
    timeout: 20_000,
  })
  const firstImg = cards.first().locator('img')
  await expect(firstImg).toHaveAttribute('loading', 'lazy')
  await expect(firstImg).toHaveAttribute('width', '256')
  await expect(firstImg).toHaveAttribute('src', /\/v1\/media\?url=.*&width=(256|512)$/)
  const { cls, sources } = await page.evaluate(
    () =>
      new Promise<{ cls: number; sources: string[] }>((resolve) => {
        let shift = 0
        const sources: string[] = []
        type Shift = PerformanceEntry & { value: number; sources?: { node?: Node }[] }
        new PerformanceObserver((list) => {
          for (const e of list.getEntries() as Shift[]) {
            shift += e.value
            for (const s of e.sources ?? []) {
              const el = s.node as Element | undefined
              sources.push(`${e.value.toFixed(4)} ${el?.tagName ?? '?'}.${el?.className ?? ''}`)
            }
          }
        }).observe({ type: 'layout-shift', buffered: true })
        setTimeout(() => resolve({ cls: shift, sources }), 500)
      }),
  )
  const bytes = await imageBytes(page)
  console.log(
    `explorer collection page (50 tokens): layout shift ${cls.toFixed(4)} ${JSON.stringify(sources.slice(0, 6))}, images ${JSON.stringify(bytes)}`,
  )
  expect(cls).toBeLessThan(0.1)
  // Pages are prefetched on intent, not on sight: none for the 50 cards and the navigation on
  // screen; a card's page once the pointer is over it (its route tree and its data: two requests).
  expect(prefetched, 'pages prefetched without intent').toEqual([])
  const link = cards.nth(1).getByRole('link')
  await link.hover()
  await expect.poll(() => [...new Set(prefetched)]).toEqual([await link.getAttribute('href')])
  await expectSafeMedia(page)
  await checkViews(page, testInfo, 'collection')

  // The next page through the list's cursor: more tokens, none twice. Read on the list with
  // burned tokens, every Pioneer minted so far (68 at the start, never fewer), as burns may
  // take the live ones to 50 or fewer by this point of a run.
  await page.goto(`/explore/collections/${pioneers}?include_burned=true`)
  await expect(cards).toHaveCount(50, { timeout: 15_000 })
  // Scrolled into view, the button reads the next page by itself (and leaves when it was the last):
  // it is clicked only while it is still there.
  const moreTokens = page.getByRole('button', { name: 'More tokens' })
  await moreTokens.scrollIntoViewIfNeeded()
  if (await moreTokens.isVisible()) await moreTokens.click({ timeout: 5_000 }).catch(() => undefined)
  await expect.poll(() => cards.count(), { timeout: 20_000 }).toBeGreaterThan(50)
  const links = await page
    .getByTestId('nft-grid')
    .getByRole('link')
    .evaluateAll((as) => as.map((a) => (a as HTMLAnchorElement).pathname))
  expect(new Set(links).size).toBe(links.length)

  // Burned tokens on request (the devnet burns some Glyphs).
  const glyphs = collectionNamed('Onchain Glyphs')
  await page.goto(`/explore/collections/${glyphs}`)
  await expect(cards.first()).toBeVisible({ timeout: 15_000 })
  expect(await page.getByTestId('nft-grid').getByText('burned', { exact: true }).count()).toBe(0)
  await page.getByLabel('Include burned tokens').check()
  await expect(page.getByLabel('Include burned tokens')).toBeChecked()
  await expect(page).toHaveURL(/include_burned=true/)
  await expect(page.getByTestId('nft-grid').getByText('burned', { exact: true }).first()).toBeVisible({
    timeout: 15_000,
  })

  // Trait filters with the counts of /traits (the Postcards have places and stamps).
  await page.goto(`/explore/collections/${collectionNamed('Devnet Postcards')}`)
  const filters = page.getByTestId('trait-filters')
  await expect(filters).toBeVisible({ timeout: 20_000 })
  await filters.locator('summary').first().click()
  // The rarest choice of the type: the devnet keeps minting Postcards, and the commonest place
  // outgrows one page of the gallery later in a run, while this one stays within it.
  const options = filters.locator('label.check')
  await expect(options.first()).toBeVisible({ timeout: 15_000 })
  const counts = (await options.locator('.muted').allTextContents()).map((c) => Number(c.replace(/,/g, '')))
  const rarest = counts.indexOf(Math.min(...counts.filter((n) => n > 0)))
  const option = options.nth(rarest)
  const expected = counts[rarest]!
  await option.locator('input').check()
  await expect(page).toHaveURL(/trait=/)
  await expect(option.locator('input')).toBeChecked()
  // The filtered list reads the tokens themselves; /traits follows them within seconds
  // (docs/api.md, "Traits") while the devnet keeps minting Postcards: the two agree but for
  // the tokens of the last few seconds.
  const shownStatus = page.getByTestId('gallery-status')
  await expect(shownStatus).toHaveText(/^\d+ tokens? shown$/, { timeout: 20_000 })
  const shown = Number((await shownStatus.textContent())!.match(/^\d+/)![0])
  expect(Math.abs(shown - expected), `${shown} shown, /traits counts ${expected}`).toBeLessThanOrEqual(3)
  expect(shown).toBeGreaterThan(0)

  // By keyboard: Tab reaches a token's link, with a visible focus ring, and Enter opens it.
  const firstLink = page.getByTestId('nft-grid').getByRole('link').first()
  for (let i = 0; i < 120; i++) {
    if (await firstLink.evaluate((el) => el === document.activeElement)) break
    await page.keyboard.press('Tab')
  }
  await expect(firstLink).toBeFocused()
  const ring = await firstLink.evaluate((el) => getComputedStyle(el, '::after').outlineStyle)
  expect(ring).toBe('solid')
  await page.keyboard.press('Enter')
  await expect(page).toHaveURL(/\/explore\/nfts\/0x[0-9a-f]{40}\/\d+$/)
})

test('a token page: artwork, attributes, owner, transfers with confirmations, coverage; the owner’s wallet', async ({
  page,
}, testInfo) => {
  test.setTimeout(240_000)
  await withDemoToken(page)
  const postcards = collectionNamed('Devnet Postcards')
  await page.goto(`/explore/collections/${postcards}`)
  await expect(page.getByTestId('nft-grid').getByRole('link').first()).toBeVisible({ timeout: 15_000 })
  await newPageCount(page)
  await page.getByTestId('nft-grid').getByRole('link').first().click()
  await expect(page.getByTestId('nft-name')).toBeVisible({ timeout: 15_000 })
  const art = page.locator('.nft-art [data-testid="artwork"]')
  await expect(art).toHaveAttribute('data-state', 'loaded', { timeout: 20_000 })
  await expect(art.locator('img')).toHaveAttribute('src', /\/v1\/media\?url=/)
  await expect(page.getByTestId('attributes').getByRole('listitem').first()).toBeVisible()
  // Newest first: the mint is the oldest row, once every older page is shown.
  const older = page.getByRole('button', { name: 'Older transfers' })
  for (let i = 0; i < 10 && (await older.isVisible()); i++) {
    await older.click()
    await page.waitForTimeout(1500)
  }
  await expect(page.getByTestId('timeline').getByRole('listitem').last()).toContainText(/^mint/i)
  await expect(page.getByTestId('timeline').getByRole('listitem').first()).toContainText(/block \d+/)
  await expect(page.getByTestId('timeline').getByTestId('confirmations').first()).toHaveText(
    /^\d[\d,]* confirmations?$/,
  )
  await expect(page.getByTestId('coverage')).toHaveText(/Coverage: (complete|partial|unknown)/)
  await expectSafeMedia(page)
  await checkViews(page, testInfo, 'token')
  console.log(`explorer token page image bytes: ${JSON.stringify(await imageBytes(page))}`)

  // The owner's wallet holds that token. The devnet keeps moving tokens between its wallets, so
  // the owner is read afresh (the token page again) and the walk is tried again if the token
  // moved meanwhile.
  const tokenPath = new URL(page.url()).pathname
  const holdings = page.getByTestId('nft-grid')
  await expect(async () => {
    await page.goto(tokenPath)
    await page.getByTestId('nft-owner').getByRole('link').click()
    await expect(page).toHaveURL(/\/explore\/owners\/0x[0-9a-f]{40}$/)
    await expect(holdings.getByTestId('nft-card').first()).toBeVisible({ timeout: 15_000 })
    // The wallet's collections (GET /v1/owners/{address}/collections) filter the holdings.
    await page
      .getByTestId('owner-collections')
      .getByLabel(/^Devnet Postcards/)
      .check()
    await expect(page).toHaveURL(new RegExp(`collection=${postcards}`))
    await expect(page.getByTestId('holdings-status')).toHaveText(/^\d+ tokens? shown/, { timeout: 15_000 })
    // The token itself may be on a later page of a large wallet: walk until it shows.
    const more = page.getByRole('button', { name: 'More holdings' })
    for (let i = 0; i < 5; i++) {
      if ((await holdings.locator(`a[href="${tokenPath}"]`).count()) > 0 || (await more.count()) === 0) break
      await more.click()
      await page.waitForTimeout(1500)
    }
    await expect(holdings.locator(`a[href="${tokenPath}"]`)).toHaveCount(1)
  }).toPass({ timeout: 100_000 })
  const cardTexts = await holdings.getByTestId('nft-card').allTextContents()
  expect(cardTexts.every((t) => t.includes('Devnet Postcards'))).toBe(true)
  // Its transfers in and out (GET /v1/owners/{address}/transfers), with confirmations.
  await expect(page.getByTestId('wallet-transfers').getByRole('listitem').first()).toContainText(
    /confirmations?/,
    { timeout: 20_000 },
  )
  await checkViews(page, testInfo, 'wallet')
  console.log(`explorer wallet page image bytes: ${JSON.stringify(await imageBytes(page))}`)

  // ERC-1155: an edition's holders, with balances; data: URIs of the Glyphs through the media path too.
  await page.goto(`/explore/nfts/${collectionNamed('Devnet Editions')}/1`)
  await expect(page.getByTestId('holders').getByRole('listitem').first()).toContainText(/×\d/, {
    timeout: 20_000,
  })
  await expect(page.getByText('ERC-1155').first()).toBeVisible()
  await page.goto(`/explore/collections/${collectionNamed('Onchain Glyphs')}`)
  await expect(
    page.getByTestId('nft-grid').locator('[data-testid="artwork"][data-state="loaded"]').first(),
  ).toBeVisible({ timeout: 20_000 })
  await expectSafeMedia(page)
})

test('broken and slow media leave a placeholder and never hold the page up', async ({ page }) => {
  test.setTimeout(180_000)
  await withDemoToken(page)
  const pioneers = await pioneersWithFullPage(page.request)
  // Every picture fails: the gallery is whole, each box says so.
  await page.route('**/v1/media?**', (route) => route.abort('failed'))
  await page.goto(`/explore/collections/${pioneers}`)
  const cards = page.getByTestId('nft-grid').getByTestId('nft-card')
  await expect(cards).toHaveCount(50, { timeout: 15_000 })
  await expect(cards.first().locator('[data-testid="artwork"]')).toHaveAttribute('data-state', 'failed')
  await expect(cards.first().getByText('Image unavailable')).toBeVisible()
  // Every picture takes 20 s: the page shows its 50 cards meanwhile, each box keeping its size.
  await page.unroute('**/v1/media?**')
  await page.route('**/v1/media?**', async (route) => {
    await new Promise((r) => setTimeout(r, 20_000))
    await route.continue().catch(() => undefined)
  })
  // The first view's requests done (a free slot of the token's 1 request per second).
  await page.waitForTimeout(3500)
  await page.goto(`/explore/collections/${pioneers}?include_burned=true`)
  await expect(cards).toHaveCount(50, { timeout: 15_000 })
  const box = await cards.first().locator('[data-testid="artwork"]').boundingBox()
  await expect(cards.first().locator('[data-testid="artwork"]')).toHaveAttribute('data-state', 'loading')
  expect(box!.height).toBeGreaterThan(100)
  expect(Math.abs(box!.height - box!.width)).toBeLessThan(1)
  await page.unrouteAll({ behavior: 'ignoreErrors' })
})

test('live activity: new events appear once each, with artwork, and their confirmations grow', async ({
  page,
}, testInfo) => {
  test.setTimeout(150_000)
  await withDemoToken(page)
  await page.goto('/explore/activity')
  await expect(page.getByTestId('activity-status')).toHaveText(/^Live through the activity stream\./, {
    timeout: 20_000,
  })
  const rows = page.getByTestId('activity-row')
  await expect(rows.first()).toBeVisible({ timeout: 30_000 })
  const firstKeys = await rows.evaluateAll((rs) => rs.map((r) => r.getAttribute('data-key')))
  // The devnet sends new transactions every second or two: newer events come on top.
  await expect
    .poll(async () => rows.first().getAttribute('data-key'), { timeout: 45_000 })
    .not.toBe(firstKeys[0])
  const keys = await rows.evaluateAll((rs) => rs.map((r) => r.getAttribute('data-key')))
  expect(new Set(keys).size, 'no event twice').toBe(keys.length)
  // Artwork of the newest rows, through the media path.
  await expect(
    page.locator('.activity-row [data-testid="artwork"][data-state="loaded"]').first(),
  ).toBeVisible({
    timeout: 45_000,
  })
  // A row's confirmations grow as blocks are mined on top of it (the newest row: it stays shown).
  const tracked = rows.first()
  const key = await tracked.getAttribute('data-key')
  const row = page.locator(`[data-key="${key}"]`)
  const confirmations = async () =>
    Number(((await row.getByTestId('confirmations').textContent()) ?? '').replace(/\D/g, '') || '-1')
  const before = await confirmations()
  await expect.poll(confirmations, { timeout: 45_000 }).toBeGreaterThan(before)
  await expectSafeMedia(page)
  await checkViews(page, testInfo, 'activity')
  console.log(`explorer activity page image bytes: ${JSON.stringify(await imageBytes(page))}`)
})

test('the home page shows the newest mints with artwork beside the index status', async ({
  page,
}, testInfo) => {
  test.setTimeout(120_000)
  await withDemoToken(page)
  await page.goto('/')
  await expect(page.getByTestId('last-seen-block')).toBeVisible()
  const mints = page.getByTestId('newest-mints')
  await expect(mints.getByTestId('activity-row').first()).toContainText(/mint/i, { timeout: 20_000 })
  await expect(mints.locator('[data-testid="artwork"][data-state="loaded"]').first()).toBeVisible({
    timeout: 30_000,
  })
  console.log(`home page images: ${JSON.stringify(await imageBytes(page))}`)
  await expect(
    page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Explore' }),
  ).toBeVisible()
  await expectSafeMedia(page)
  await checkViews(page, testInfo, 'home')
})

type Holder = { owner: string; token_count: number; balance?: string }
/** The holders table as shown: rank, owner (its wallet link), count and share of each row. */
function shownHolders(page: Page) {
  return page.getByTestId('holder-row').evaluateAll((rows) =>
    rows.map((r) => ({
      rank: Number(r.querySelector('td')?.textContent),
      owner: r.getAttribute('data-owner') ?? '',
      href: (r.querySelector('th a') as HTMLAnchorElement | null)?.pathname ?? '',
      token_count: Number(r.querySelector('[data-testid="holder-count"]')?.textContent?.replace(/,/g, '')),
      share: r.querySelector('[data-testid="holder-share"]')?.textContent ?? '',
    })),
  )
}

/** `part` of `total` as the table writes it (tenths from 10 %, hundredths below). */
const percent = (part: number, total: number) => {
  const p = (100 * part) / total
  return `${p >= 10 ? p.toFixed(1) : p.toFixed(2)}%`
}

test('a collection’s holders: ranks, shares, wallet links, pages, the holders at a past block, refused blocks', async ({
  page,
  request,
}, testInfo) => {
  test.setTimeout(300_000)
  // 30 holders of 1, 2 or 3 tokens (60 tokens), then 10 more tokens to a 31st holder.
  const contract = (await deployE2EContract('E2EHolders', [30n])).toLowerCase()
  const ownersPath = `/v1/collections/${contract}/owners?limit=100`
  let before = 0
  let past: Holder[] = []
  await expect
    .poll(
      async () => {
        const now = await apiAnswer<{ data?: Holder[] }>(request, ownersPath)
        if (now.status !== 200 || now.body.data?.length !== 30) return `now: ${now.status}`
        const at = await apiAnswer<{ data?: Holder[] }>(request, `${ownersPath}&at_block=${now.confirmed}`)
        if (at.status !== 200 || at.body.data?.length !== 30) return `at ${now.confirmed}: ${at.status}`
        before = now.confirmed
        past = at.body.data
        return 'indexed and confirmed'
      },
      { timeout: 120_000, intervals: [1000] },
    )
    .toBe('indexed and confirmed')
  // The claim, confirmed (a reorganisation may drop a call: it is sent again from another key).
  let claimer = ''
  let current: Holder[] = []
  for (let attempt = 1; !claimer; attempt++) {
    const call = await callE2EContract('E2EHolders', contract as `0x${string}`, 'claim', [10n])
    const from = call.from.toLowerCase()
    const landed = await expect
      .poll(
        async () => {
          const now = await apiAnswer<{ data?: Holder[] }>(request, ownersPath)
          current = now.body.data ?? []
          return current[0]?.owner === from && now.confirmed >= Number(call.blockNumber)
        },
        { timeout: 30_000, intervals: [1000] },
      )
      .toBe(true)
      .then(() => true)
      .catch(() => false)
    if (landed) claimer = from
    else if (attempt >= 3) throw new Error('the claim never landed')
  }
  expect(current).toHaveLength(31)
  expect(current[0]).toEqual({ owner: claimer, token_count: 10 })
  expect(past.some((h) => h.owner === claimer)).toBe(false)

  await withDemoToken(page)
  await page.goto(`/explore/collections/${contract}`)
  // The gallery is the default view.
  await expect(page.getByTestId('nft-grid').getByTestId('nft-card').first()).toBeVisible({ timeout: 15_000 })
  const views = page.getByRole('navigation', { name: 'Collection views' })
  await expect(views.getByRole('link', { name: 'Tokens' })).toHaveAttribute('aria-current', 'page')
  const started = Date.now()
  await views.getByRole('link', { name: 'Holders' }).click()
  await expect(page).toHaveURL(new RegExp(`/explore/collections/${contract}\\?view=holders$`))
  await expect(views.getByRole('link', { name: 'Holders' })).toHaveAttribute('aria-current', 'page')
  const rows = page.getByTestId('holder-row')
  const status = page.getByTestId('holders-status')
  await expect(rows).toHaveCount(25, { timeout: 15_000 })
  console.log(`explorer holders view: 25 holders shown ${Date.now() - started} ms after the click`)
  await expect(status).toHaveText('Current holders · 25 shown, more below')
  await expect(page.getByRole('table')).toHaveAccessibleName(
    /^Current holders of E2E Holders, most tokens first$/,
  )
  // The first page as /v1 answers it: ranks, owners, counts; shares of the 70 tokens held.
  await expect(page.getByTestId('holders-share-note')).toHaveText(
    'Share: of the 70 tokens held by all holders now (burned tokens excluded).',
    { timeout: 15_000 },
  )
  let shown = await shownHolders(page)
  expect(shown).toEqual(
    current.slice(0, 25).map((h, i) => ({
      rank: i + 1,
      owner: h.owner,
      href: `/explore/owners/${h.owner}`,
      token_count: h.token_count,
      share: percent(h.token_count, 70),
    })),
  )
  expect(shown[0]!.share).toBe('14.3%')
  await checkViews(page, testInfo, 'holders')

  // The next page through the cursor: every holder once, in the API's order.
  await page.getByRole('button', { name: 'More holders' }).click()
  await expect(rows).toHaveCount(31, { timeout: 15_000 })
  await expect(status).toHaveText('Current holders · 31 shown')
  await expect(page.getByRole('button', { name: 'More holders' })).toHaveCount(0)
  shown = await shownHolders(page)
  expect(new Set(shown.map((h) => h.owner)).size).toBe(31)
  expect(shown.map((h) => [h.rank, h.owner, h.token_count])).toEqual(
    current.map((h, i) => [i + 1, h.owner, h.token_count]),
  )

  // A holder's link opens its wallet; back returns to the holders.
  await rows.first().getByRole('link').click()
  await expect(page).toHaveURL(new RegExp(`/explore/owners/${claimer}$`))
  await expect(page.getByTestId('owner-address')).toHaveText(claimer)
  await page.goBack()
  await expect(page).toHaveURL(/\?view=holders$/)
  await expect(rows.first()).toHaveAttribute('data-owner', claimer, { timeout: 15_000 })

  // As of the block before the claim, typed and sent with the keyboard.
  const input = page.getByLabel('As of block')
  await input.focus()
  await page.keyboard.type(String(before))
  await page.keyboard.press('Enter')
  await expect(page).toHaveURL(new RegExp(`\\?view=holders&at_block=${before}$`))
  await expect(status).toHaveText(`Holders after block ${before} · 25 shown, more below`, { timeout: 15_000 })
  await expect(page.getByRole('table')).toHaveAccessibleName(
    `Holders of E2E Holders after block ${before}, most tokens first`,
  )
  // No total at a past block until every holder is listed: the shares wait for the last page.
  await expect(page.getByTestId('holders-share-note')).toContainText('shown once every holder is listed')
  await expect(rows.first().getByTestId('holder-share')).toHaveText('—not known yet')
  await page.getByRole('button', { name: 'More holders' }).click()
  await expect(rows).toHaveCount(30, { timeout: 15_000 })
  await expect(page.getByTestId('holders-share-note')).toHaveText(
    `Share: of the 60 tokens held by all holders after block ${before} (burned tokens excluded).`,
  )
  shown = await shownHolders(page)
  expect(shown).toEqual(
    past.map((h, i) => ({
      rank: i + 1,
      owner: h.owner,
      href: `/explore/owners/${h.owner}`,
      token_count: h.token_count,
      share: percent(h.token_count, 60),
    })),
  )
  // It differs from now: the claimer held nothing then.
  expect(shown.some((h) => h.owner === claimer)).toBe(false)
  await checkViews(page, testInfo, 'holders-at-block')

  // Back: the current holders again, the field empty.
  await page.goBack()
  await expect(page).toHaveURL(/\?view=holders$/)
  await expect(status).toHaveText('Current holders · 25 shown, more below', { timeout: 15_000 })
  await expect(input).toHaveValue('')
  await expect(rows.first()).toHaveAttribute('data-owner', claimer)

  // Refused blocks show the API's message: a block not confirmed yet, a malformed one.
  const future = '999999999999'
  const notYet = await apiAnswer<{ error: { message: string } }>(request, `${ownersPath}&at_block=${future}`)
  expect(notYet.status).toBe(400)
  expect(notYet.body.error.message).toMatch(/not confirmed yet/)
  await input.fill(future)
  await page.getByRole('button', { name: 'Show', exact: true }).click()
  const refused = page.getByTestId('holders-refused')
  await expect(refused).toBeVisible({ timeout: 15_000 })
  await expect(refused).toHaveAttribute('role', 'alert')
  // The message names the confirmed range, which grows meanwhile: the part before it.
  await expect(refused).toContainText(
    `Block ${future} cannot be shown: ${notYet.body.error.message.split(';')[0]}`,
  )
  await expect(input).toHaveAttribute('aria-invalid', 'true')
  await expect(rows).toHaveCount(0)
  await expect(page.getByRole('heading', { level: 1, name: 'E2E Holders' })).toBeVisible()
  await checkViews(page, testInfo, 'holders-refused')
  const malformed = await apiAnswer<{ error: { message: string } }>(request, `${ownersPath}&at_block=12abc`)
  expect(malformed.status).toBe(400)
  await input.fill('12abc')
  await input.press('Enter')
  await expect(page).toHaveURL(/at_block=12abc$/)
  await expect(refused).toContainText(`Block 12abc cannot be shown: ${malformed.body.error.message}`, {
    timeout: 15_000,
  })
  // Clearing returns to the current holders.
  await page.getByRole('button', { name: 'Show the current holders' }).click()
  await expect(page).toHaveURL(/\?view=holders$/)
  await expect(status).toHaveText('Current holders · 25 shown, more below', { timeout: 15_000 })
  await expect(input).toHaveValue('')
  await expect(input).toBeFocused()

  // ERC-1155: balances beside the token ids; every holder on one page, so shares of all units.
  const editions = collectionNamed('Devnet Editions')
  await page.goto(`/explore/collections/${editions}?view=holders`)
  await expect(rows.first()).toBeVisible({ timeout: 15_000 })
  await expect(page.getByRole('columnheader', { name: 'Balance' })).toBeVisible()
  await expect(page.getByRole('columnheader', { name: 'Token ids' })).toBeVisible()
  await expect(page.getByTestId('holders-share-note')).toHaveText(
    /^Share: of the [\d,]+ units held by all holders now \(a unit: one of an id’s balance\)\.$/,
  )
  const editionRows = await rows.evaluateAll((rs) =>
    rs.map((r) => ({
      balance: Number(r.querySelector('[data-testid="holder-balance"]')?.textContent?.replace(/,/g, '')),
      share: r.querySelector('[data-testid="holder-share"]')?.textContent ?? '',
    })),
  )
  const units = editionRows.reduce((n, r) => n + r.balance, 0)
  await expect(page.getByTestId('holders-share-note')).toContainText(
    `of the ${units.toLocaleString('en')} units`,
  )
  for (const r of editionRows) expect(r.share).toBe(percent(r.balance, units))
})

/** An SVG that would report itself in every way it could run or load anything. */
function hostileSvg(origin: string): string {
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="300" height="300" viewBox="0 0 300 300" onload="window.top.__hostile='onload';fetch('${origin}/hostile-ran/onload')">`,
    `<script>window.top.__hostile='script';fetch('${origin}/hostile-ran/script');new Image().src='${origin}/hostile-ran/image'</script>`,
    '<rect width="300" height="300" fill="#c33"/>',
    '<image href="https://hostile.invalid/external.png" width="50" height="50"/>',
    '<image xlink:href="http://hostile.invalid/xlink.png" x="60" width="50" height="50"/>',
    '<foreignObject width="300" height="300"><iframe xmlns="http://www.w3.org/1999/xhtml" src="http://hostile.invalid/frame"></iframe></foreignObject>',
    `<a href="javascript:window.top.__hostile='link'"><text x="20" y="150" onmouseover="window.top.__hostile='hover'">hostile</text></a>`,
    '</svg>',
  ].join('')
}

test('a token whose image is a hostile SVG runs no script and loads nothing in the explorer', async ({
  page,
  request,
  baseURL,
}, testInfo) => {
  test.setTimeout(240_000)
  const svg = hostileSvg(baseURL!)
  const metadata = {
    name: 'Hostile SVG',
    description: '<img src=x onerror="window.top.__hostile=1"> a description with markup',
    image: `data:image/svg+xml;base64,${Buffer.from(svg).toString('base64')}`,
    attributes: [{ trait_type: '<script>alert(1)</script>', value: '<b>bold</b>' }],
  }
  const uri = `data:application/json;base64,${Buffer.from(JSON.stringify(metadata)).toString('base64')}`
  const contract = (await deployE2EContract('E2EHostileArt', [uri])).toLowerCase()
  // Indexed, its metadata read and its image stored.
  type Token = { data: { media_url?: string; media_type?: string; thumbnails?: Record<string, string> } }
  let token: Token['data'] = {}
  await expect
    .poll(
      async () => {
        const res = await request.get(`/v1/nfts/${contract}/1?include_metadata=true`, {
          headers: { Authorization: `Bearer ${demo.token}` },
        })
        await new Promise((r) => setTimeout(r, 1500))
        if (res.status() !== 200) return `status ${res.status()}`
        token = ((await res.json()) as Token).data
        return token.media_url ? 'stored' : 'pending'
      },
      { timeout: 150_000, intervals: [2000] },
    )
    .toBe('stored')
  expect(token.media_type).toBe('image/svg+xml')

  // What the SVG tried to request, and what of it actually left the browser (not refused by a CSP).
  const tried: string[] = []
  const blocked: string[] = []
  page.context().on('request', (r) => {
    if (r.url().includes('hostile')) tried.push(r.url())
  })
  page.context().on('requestfailed', (r) => {
    if (r.url().includes('hostile') && r.failure()?.errorText === 'csp') blocked.push(r.url())
  })
  await withDemoToken(page)
  await page.goto(`/explore/nfts/${contract}/1`)
  await expect(page.getByTestId('nft-name')).toHaveText('Hostile SVG', { timeout: 15_000 })
  const art = page.locator('.nft-art [data-testid="artwork"]')
  await expect(art).toHaveAttribute('data-state', 'loaded', { timeout: 20_000 })
  // The picture is the thumbnail: the SVG rendered to PNG by the media path.
  const src = await art.locator('img').getAttribute('src')
  expect(src).toMatch(/\/v1\/media\?url=.*&width=512$/)
  const thumb = await request.get(src!)
  expect(thumb.headers()['content-type']).toBe('image/png')
  // The markup of the description and the attributes is text.
  await expect(
    page.getByText('<img src=x onerror="window.top.__hostile=1"> a description with markup'),
  ).toBeVisible()
  await expect(page.getByTestId('attributes')).toContainText('<script>alert(1)</script>')
  await art.hover()
  await page.waitForTimeout(2000)
  expect(await page.evaluate(() => (window as { __hostile?: unknown }).__hostile)).toBeUndefined()
  await expectSafeMedia(page)
  // The page's own policy: pictures only from this origin (and data:/blob:), no frames, no plugins.
  const csp = await page.locator('meta[http-equiv="Content-Security-Policy"]').getAttribute('content')
  expect(csp).toContain("img-src 'self'")
  expect(csp).toContain("frame-src 'none'")
  expect(csp).toContain("object-src 'none'")
  await checkViews(page, testInfo, 'hostile-token')

  expect(tried, 'requests the hostile SVG made from the explorer page').toEqual([])

  // The original, opened from the page ("open the original"): served sandboxed, inert.
  const original = await request.get(token.media_url!)
  expect(original.headers()['content-type']).toBe('image/svg+xml')
  expect(original.headers()['x-content-type-options']).toBe('nosniff')
  expect(original.headers()['content-security-policy']).toMatch(/default-src 'none'.*sandbox/)
  const [tab] = await Promise.all([
    page.context().waitForEvent('page'),
    page.getByRole('link', { name: 'open the original' }).click(),
  ])
  await tab.waitForLoadState('load')
  await tab.mouse.move(100, 150)
  await tab.waitForTimeout(2000)
  expect(await tab.evaluate(() => (window as { __hostile?: unknown }).__hostile)).toBeUndefined()
  expect(await page.evaluate(() => (window as { __hostile?: unknown }).__hostile)).toBeUndefined()
  await tab.close()
  // Inside the explorer nothing was even tried (an <img> loads nothing an SVG references); the
  // original in its own tab tried its external pictures, and its sandbox policy refused them all.
  expect(blocked.sort(), 'requests of the hostile SVG that were not refused').toEqual(tried.sort())
  expect(
    tried.every((u) => u.startsWith('http://hostile.invalid/') || u.startsWith('https://hostile.invalid/')),
  ).toBe(true)
})
