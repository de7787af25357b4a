/**
 * The explorer (docs/explorer.md, "Hostile input") under input anyone can write: addresses, token
 * ids and queries in its own URLs, and a collection deployed for the test whose name, symbol and
 * tokens' metadata hold bidi overrides, invisible, extremely long and stacked (combining-mark)
 * names, markup, script URLs, an HTML animation with script, trait types with a colon and values
 * a filter cannot tell apart. Every page answers (a page or a 404, never a 500 or an error line in
 * the log), chain text reorders nothing around it, nothing scrolls sideways, nothing runs.
 */
import { seriousViolations } from './helpers/axe'
import { withDemoToken } from './helpers/demo-api'
import { expect, test } from './helpers/fixtures'
import {
  deployHostileCollection,
  inReadingOrder,
  RLO,
  sidewaysScroll,
  UINT256_MAX,
} from './helpers/hostile-text'
import { webErrors } from './helpers/service-log'

/** The hostile collection's address (lowercase) and the wallet holding its tokens. */
let hostile: string
let holder: string

test.beforeAll(async ({ request, baseURL }) => {
  test.setTimeout(240_000)
  const deployed = await deployHostileCollection(request, baseURL!)
  hostile = deployed.address
  holder = deployed.holder
})

test('malformed and extreme addresses, token ids and queries: a page or a 404, never a 500, no error logged', async ({
  request,
}) => {
  test.setTimeout(120_000)
  const errorsBefore = webErrors().length
  const a = `0x${'ab'.repeat(20)}`
  const long = 'x'.repeat(10_000)
  const expected: [string, number][] = [
    // Addresses: any letter case is the page; anything else is the portal's 404.
    [`/explore/collections/${a}`, 200],
    [`/explore/collections/${a.toUpperCase().replace('0X', '0x')}`, 200],
    [`/explore/collections/${a.slice(0, -1)}`, 404],
    [`/explore/collections/${a}00`, 404],
    [`/explore/collections/${long}`, 404],
    [`/explore/collections/%25ZZ`, 404],
    [`/explore/collections/%2525E0%25A4`, 404],
    [`/explore/collections/${a}%00`, 404],
    [`/explore/collections/..%2F..%2Fportal`, 404],
    [`/explore/owners/${a.slice(2)}`, 404],
    [`/explore/owners/%25ZZ`, 404],
    [`/explore/nfts/%25ZZ/1`, 404],
    // Token ids: decimal uint256 values only.
    [`/explore/nfts/${a}/0`, 200],
    [`/explore/nfts/${a}/${UINT256_MAX}`, 200],
    [`/explore/nfts/${a}/${UINT256_MAX + 1n}`, 404],
    [`/explore/nfts/${a}/${'9'.repeat(78)}`, 404],
    [`/explore/nfts/${a}/${'9'.repeat(79)}`, 404],
    [`/explore/nfts/${a}/${'1'.repeat(10_000)}`, 404],
    [`/explore/nfts/${a}/-1`, 404],
    [`/explore/nfts/${a}/0x10`, 404],
    [`/explore/nfts/${a}/1e3`, 404],
    [`/explore/nfts/${a}/1.5`, 404],
    [`/explore/nfts/${a}/%25ZZ`, 404],
    [`/explore/nfts/${a}/1%00`, 404],
    [`/explore/nfts/${a}/1/2`, 404],
    // Queries: the page, whatever they hold (the API judges what it is sent).
    [`/explore?search=${long}`, 200],
    [`/explore?search=%ZZ&search=%E2%80%AE`, 200],
    [`/explore/collections/${a}?trait=${long}:v&trait=T:${'y'.repeat(3000)}`, 200],
    [`/explore/collections/${a}?trait=%ZZ:%ZZ&trait=a&include_burned=true&include_burned=%ZZ`, 200],
    [`/explore/collections/${a}?${Array.from({ length: 200 }, (_, i) => `trait=T:${i}`).join('&')}`, 200],
    [`/explore/collections/${a}?view=holders&view=holders&at_block=${long}`, 200],
    [`/explore/collections/${a}?view=holders&at_block=%ZZ&at_block=-1`, 200],
    [`/explore/owners/${a}?collection=%ZZ&direction=%ZZ&direction=in`, 200],
    [`/explore/activity?x=%ZZ`, 200],
  ]
  for (const [target, status] of expected) {
    const res = await request.get(target, { maxRedirects: 0 })
    expect(res.status(), target.slice(0, 120)).toBe(status)
  }
  // A token id written with leading zeros names the same token: its page is the id's own address.
  for (const [written, canonical] of [
    ['0001', '1'],
    ['000', '0'],
    [`0${2n ** 255n}`, `${2n ** 255n}`],
  ]) {
    const res = await request.get(`/explore/nfts/${a}/${written}`, { maxRedirects: 0 })
    expect(res.status(), written).toBe(308)
    expect(res.headers().location, written).toBe(`/explore/nfts/${a}/${canonical}`)
  }
  await new Promise((r) => setTimeout(r, 500))
  expect(webErrors().slice(errorsBefore)).toEqual([])
})

test('text from the address (a refused block, a search) reorders nothing around it', async ({ page }) => {
  test.setTimeout(90_000)
  await withDemoToken(page)
  await page.goto(`/explore/collections/${hostile}?view=holders&at_block=${encodeURIComponent(`${RLO}12`)}`)
  const refused = page.getByTestId('holders-refused')
  await expect(refused).toContainText('cannot be shown: at_block:', { timeout: 15_000 })
  expect(await inReadingOrder(refused, 'cannot be shown: at_block:')).toBe(true)

  await page.goto(`/explore?search=${encodeURIComponent(`zz${RLO}none`)}`)
  const none = page.getByText(/No collection's name contains/)
  await expect(none).toBeVisible({ timeout: 15_000 })
  expect(await inReadingOrder(none, 'No collection')).toBe(true)
  expect(await inReadingOrder(none, '”.')).toBe(true)
})

test('a hostile collection: its name and symbol isolated, invisible, huge and stacked token names contained', async ({
  page,
}) => {
  test.setTimeout(180_000)
  await withDemoToken(page)

  // The grid: the symbol's override leaves the standard's badge and its separator in order.
  await page.goto(`/explore?search=Hostile`)
  const card = page.getByTestId('collection-card').filter({ has: page.locator(`a[href$="${hostile}"]`) })
  await expect(card).toBeVisible({ timeout: 15_000 })
  expect.soft(await inReadingOrder(card.locator('p').first(), '· ERC-721')).toBe(true)
  expect.soft(await sidewaysScroll(page), '/explore scrolls sideways').toEqual([0, 0])

  // The gallery: every token named by what can be seen, in a card of bounded size.
  await page.goto(`/explore/collections/${hostile}`)
  const cards = page.getByTestId('nft-grid').getByTestId('nft-card')
  await expect(cards).toHaveCount(5, { timeout: 15_000 })
  await expect.soft(page.locator(`a[href="/explore/nfts/${hostile}/2"]`)).toHaveText('#2')
  for (const id of ['1', '2', '3', '4', `${UINT256_MAX}`]) {
    const box = await page
      .getByTestId('nft-card')
      .filter({ has: page.locator(`a[href="/explore/nfts/${hostile}/${id}"]`) })
      .boundingBox()
    expect.soft(box!.height, `card of token ${id}`).toBeLessThan(480)
  }
  expect.soft(await sidewaysScroll(page), 'the gallery scrolls sideways').toEqual([0, 0])
  expect.soft(await seriousViolations(page), 'axe on the gallery').toEqual([])

  // A token page: the breadcrumb's and the facts' token id after the collection's name, in order.
  await page.goto(`/explore/nfts/${hostile}/1`)
  await expect(page.getByTestId('nft-name')).toHaveText(`Spoof${RLO}1234`, { timeout: 15_000 })
  expect.soft(await inReadingOrder(page.getByRole('navigation', { name: 'Breadcrumb' }), '/ #1')).toBe(true)
  expect.soft(await inReadingOrder(page.locator('.nft-facts p').first(), 'token 1 · ERC-721')).toBe(true)
  expect.soft(await sidewaysScroll(page), 'a token page scrolls sideways').toEqual([0, 0])
  expect.soft(await seriousViolations(page), 'axe on a token page').toEqual([])

  // Nothing of the chain data is a link: every link stays on this origin (or opens the media path
  // in a new tab, without an opener).
  const links = await page.locator('main a[href]').evaluateAll((as) =>
    as.map((a) => ({
      href: (a as HTMLAnchorElement).href,
      target: a.getAttribute('target'),
      rel: a.getAttribute('rel'),
    })),
  )
  for (const link of links) {
    expect(new URL(link.href).origin, link.href).toBe(new URL(page.url()).origin)
    if (link.target === '_blank') expect(link.rel).toBe('noopener noreferrer')
  }

  // Invisible, stacked and huge names: a heading that can be seen, nothing scrolls sideways.
  await page.goto(`/explore/nfts/${hostile}/2`)
  await expect.soft(page.getByTestId('nft-name')).toHaveText('#2', { timeout: 15_000 })
  await page.goto(`/explore/nfts/${hostile}/4`)
  await expect(page.getByTestId('nft-name')).toBeVisible({ timeout: 15_000 })
  const stacked = await page.getByTestId('nft-name').boundingBox()
  expect.soft(stacked!.height, 'a name of stacked marks').toBeLessThan(200)
  expect.soft(await sidewaysScroll(page), 'a token page of stacked marks scrolls sideways').toEqual([0, 0])
  await page.goto(`/explore/nfts/${hostile}/3`)
  await expect(page.getByTestId('nft-name')).toHaveText('W'.repeat(1000), { timeout: 15_000 })
  expect
    .soft(await sidewaysScroll(page), 'a token page of a 1,000-character name scrolls sideways')
    .toEqual([0, 0])

  // The holders and the wallet: the collection's name in a table caption and in a filter.
  await page.goto(`/explore/collections/${hostile}?view=holders`)
  await expect(page.getByTestId('holder-row')).toHaveCount(1, { timeout: 15_000 })
  expect.soft(await sidewaysScroll(page), 'the holders scroll sideways').toEqual([0, 0])
  await page.goto(`/explore/owners/${holder}`)
  await expect(page.getByTestId('nft-grid').getByTestId('nft-card')).toHaveCount(5, { timeout: 15_000 })
  await expect(page.getByTestId('owner-collections')).toBeVisible()
  const first = page
    .getByTestId('nft-card')
    .filter({ has: page.locator(`a[href="/explore/nfts/${hostile}/1"]`) })
  expect.soft(await inReadingOrder(first.locator('.muted').first(), '#1')).toBe(true)
  expect.soft(await sidewaysScroll(page), 'the wallet scrolls sideways').toEqual([0, 0])
})

test('trait filters: values one filter cannot tell apart are one choice; a trait type with a colon is named escaped', async ({
  page,
}) => {
  test.setTimeout(120_000)
  await withDemoToken(page)
  await page.goto(`/explore/collections/${hostile}`)
  const filters = page.getByTestId('trait-filters')
  await expect(filters).toBeVisible({ timeout: 20_000 })
  expect.soft(await sidewaysScroll(page), 'the filters scroll sideways').toEqual([0, 0])

  // `Level:1` matches the number 1 and the string "1", which /traits counts apart: one choice, both counted.
  const level = filters.locator('details').filter({ has: page.locator('summary', { hasText: /^Level/ }) })
  await level.locator('summary').click()
  const choices = level.getByRole('checkbox')
  await expect(choices).toHaveCount(1)
  await expect(level.locator('label')).toHaveText(/^1\s*2$/)
  await choices.check()
  await expect(page).toHaveURL(/trait=Level%3A1$/)
  await expect(page.getByTestId('gallery-status')).toHaveText('2 tokens shown', { timeout: 15_000 })

  // `Kind:Sub:x` would be read as the type `Kind`: the filter escapes the type's colon (`Kind\:Sub:x`).
  await choices.uncheck()
  await expect(page.getByTestId('gallery-status')).not.toHaveText('2 tokens shown', { timeout: 15_000 })
  const kind = filters.locator('details').filter({ has: page.locator('summary', { hasText: /^Kind:Sub/ }) })
  await kind.locator('summary').click()
  await expect(kind.getByRole('checkbox')).toHaveCount(1)
  await expect(kind).not.toContainText('cannot be filtered')
  await kind.getByRole('checkbox').check()
  await expect(page).toHaveURL(new RegExp(`trait=${encodeURIComponent('Kind\\:Sub:x')}$`))
  await expect(page.getByTestId('gallery-status')).toHaveText('1 token shown', { timeout: 15_000 })
  await expect(page.locator(`a[href="/explore/nfts/${hostile}/1"]`).first()).toBeVisible()
})

test('a collection at the /traits caps (100 types of 1,000 values): the types are read alone, and only what is opened is read and rendered', async ({
  page,
}) => {
  test.setTimeout(120_000)
  await withDemoToken(page)
  const traitTypes = Array.from({ length: 100 }, (_, t) => ({
    trait_type: `Type ${t}`,
    token_count: 1000,
    missing_count: 0,
    value_count: 1500,
    values: Array.from({ length: 1000 }, (_, v) => ({ value: `value ${t}.${v}`, token_count: 1000 - v })),
    values_omitted: 500,
  }))
  // Answers as the API does to `values_limit` and `trait_type` (src/server/api/v1/traits.test.ts).
  const asked: URLSearchParams[] = []
  await page.route('**/v1/collections/*/traits?**', (route) => {
    const params = new URL(route.request().url()).searchParams
    asked.push(params)
    const only = params.getAll('trait_type')
    const limit = Number(params.get('values_limit') ?? 1000)
    const listed = traitTypes
      .filter((t) => only.length === 0 || only.includes(t.trait_type))
      .map((t) => ({
        ...t,
        values: t.values.slice(0, limit),
        values_omitted: t.value_count - Math.min(limit, 1000),
      }))
    const data = {
      contract_address: hostile,
      network: 'devnet',
      token_count: 1000,
      trait_types: listed,
      trait_types_omitted: traitTypes.length - listed.length,
    }
    return route.fulfill({ status: 200, contentType: 'application/json', body: JSON.stringify({ data }) })
  })
  const started = Date.now()
  await page.goto(`/explore/collections/${hostile}`)
  const filters = page.getByTestId('trait-filters')
  await expect(filters.locator('summary')).toHaveCount(100, { timeout: 30_000 })
  const shownMs = Date.now() - started
  // Closed types hold no choices in the page (the DOM, not only what is visible).
  const inputs = filters.locator('input[type="checkbox"]')
  const closed = await inputs.count()
  console.log(
    `explorer: 100 trait types of 1,000 values shown in ${shownMs} ms, ${closed} choices in the page`,
  )
  expect.soft(closed).toBe(0)
  // An opened type shows its first values, and the rest on request.
  const first = filters.locator('details').first()
  await first.locator('summary').click()
  await expect.poll(() => inputs.count()).toBeGreaterThan(0)
  expect(await inputs.count()).toBeLessThanOrEqual(50)
  await first.getByRole('button', { name: /Show all 1,000 values/ }).click()
  await expect(inputs).toHaveCount(1000)
  await expect(first).toContainText('and 500 rarer values')
  // Closed, its choices leave the page; reopened, it is read again and shows all of them again.
  await first.locator('summary').click()
  await expect(inputs).toHaveCount(0)
  await first.locator('summary').click()
  await expect(inputs).toHaveCount(1000)
  // The types came without values; the opened type's values alone, by name, once per opening.
  expect(asked.map((p) => [p.get('values_limit'), p.getAll('trait_type')])).toEqual([
    ['0', []],
    [null, ['Type 0']],
    [null, ['Type 0']],
  ])
  await page.unrouteAll({ behavior: 'ignoreErrors' })
})

test('live activity: a token’s hostile name reorders nothing after it in its row', async ({ page }) => {
  test.setTimeout(120_000)
  await withDemoToken(page)
  // Every token the feed reads for its artwork is named with an override (the feed's rows show
  // a token's name once read); an ERC-1155 row's amount follows the name.
  await page.route(/\/v1\/nfts\/0x[0-9a-f]{40}\/\d+\?/, async (route) => {
    const response = await route.fetch()
    const json = (await response.json()) as { data?: { name?: string } }
    if (json.data) json.data.name = `Spoof${RLO}1234`
    await route.fulfill({ response, json })
  })
  await page.goto('/explore/activity')
  const row = page.getByTestId('activity-row').filter({ hasText: 'Spoof' }).filter({ hasText: /×\d/ }).first()
  await expect(row).toBeVisible({ timeout: 60_000 })
  const amount = (await row.textContent())!.match(/×[\d,]+/)![0]
  expect(await inReadingOrder(row.locator('div').first(), amount), `"${amount}" after the name`).toBe(true)
  expect(await sidewaysScroll(page), 'the activity scrolls sideways').toEqual([0, 0])
  await page.unrouteAll({ behavior: 'ignoreErrors' })
})

test('a hostile token’s HTML animation opens sandboxed and runs nothing', async ({ page, context }) => {
  test.setTimeout(90_000)
  const tried: string[] = []
  context.on('request', (r) => {
    if (new URL(r.url()).pathname.startsWith('/hostile-ran')) tried.push(r.url())
  })
  await withDemoToken(page)
  await page.goto(`/explore/nfts/${hostile}/1`)
  const open = page.getByRole('link', { name: 'open it' })
  await expect(open).toBeVisible({ timeout: 15_000 })
  await expect(open).toHaveAttribute('rel', 'noopener noreferrer')
  const [tab] = await Promise.all([context.waitForEvent('page'), open.click()])
  await tab.waitForLoadState('load')
  await tab.waitForTimeout(1500)
  expect(await tab.evaluate(() => (window as { __hostile?: unknown }).__hostile)).toBeUndefined()
  expect(await page.evaluate(() => (window as { __hostile?: unknown }).__hostile)).toBeUndefined()
  await tab.close()
  expect(tried).toEqual([])
})
