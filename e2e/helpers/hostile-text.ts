/**
 * Chain text anyone can write, for the browser tests of the pages that show it (the explorer's,
 * e2e/explorer-hostile.spec.ts, and the portal's token view, e2e/tokens-hostile.spec.ts):
 * `e2e/contracts/E2EHostileText.sol` deployed with a name, symbol and token documents holding
 * bidi overrides, invisible, extremely long and stacked (combining-mark) names, markup and script
 * URLs; and the checks on what a page makes of them — the order of the text after a name, and
 * sideways scrolling.
 */
import type { APIRequestContext, Locator, Page } from '@playwright/test'
import { issueDemoToken, pacedGet } from './demo-api'
import { deployE2EContract } from './devnet'
import { expect } from './fixtures'

/** Right-to-left override: everything after it, to the end of its paragraph, is shown reversed. */
export const RLO = '\u202e'
export const UINT256_MAX = 2n ** 256n - 1n
export const VIEWPORTS = [
  { width: 1280, height: 800 },
  { width: 390, height: 844 },
] as const

type Token = {
  token_id: string
  metadata_status: string
  current_owner: string
  name?: string
  animation_media_url?: string
}

/** A document inside its URI; `parameter` is a media-type parameter, ignored by the reader. */
const dataJson = (doc: unknown, parameter = '') =>
  `data:application/json${parameter};base64,${Buffer.from(JSON.stringify(doc)).toString('base64')}`

/** A small image inside its URI (the portal's token view shows it without fetching anything). */
const SQUARE_SVG = `data:image/svg+xml;base64,${Buffer.from(
  '<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64"><rect width="64" height="64" fill="#c0f"/></svg>',
).toString('base64')}`

/** The hostile collection's name: an override, then a 300-character word. */
export const HOSTILE_NAME = `Hostile${RLO} Text ${'W'.repeat(300)}`

/**
 * The hostile collection's token URIs: what its tokens say about themselves. Token 1's URI holds
 * an override too (in a parameter the reader ignores): a page that names where a document came
 * from shows it.
 */
function hostileUris(origin: string): [bigint, string][] {
  const documents: [bigint, unknown][] = [
    [
      1n,
      {
        // Shown reversed itself ("Spoof4321"), and — not isolated — everything after it too.
        name: `Spoof${RLO}1234`,
        description: `<img src=x onerror="window.__hostile='description'"> ${RLO}reversed to the end of its paragraph`,
        external_url: `javascript:window.__hostile='external_url'`,
        image: `javascript:window.__hostile='image'`,
        animation_url: `data:text/html,<script>window.__hostile='animation';fetch('${origin}/hostile-ran/animation')</script>`,
        attributes: [
          { trait_type: 'Level', value: 1 },
          { trait_type: 'Kind:Sub', value: 'x' },
          { trait_type: 'W'.repeat(256), value: 'V'.repeat(1024) },
        ],
      },
    ],
    // Zero-width characters only: a name nobody can see (on an image, whose text must still say something).
    [
      2n,
      {
        name: '\u200b\u200b\u2060\ufeff\u200d',
        image: SQUARE_SVG,
        attributes: [{ trait_type: 'Level', value: '1' }],
      },
    ],
    // The longest name the indexer keeps, as one word.
    [3n, { name: 'W'.repeat(1000) }],
    // One letter with 960 combining marks stacked on it.
    [4n, { name: `Z${'\u0336\u0489\u030d\u0344'.repeat(240)}` }],
    [UINT256_MAX, { name: 'The largest id' }],
  ]
  return documents.map(([id, doc]) => [id, dataJson(doc, id === 1n ? `;note=${RLO}spoof` : '')])
}

/**
 * Deploys the hostile collection (tokens 1–4 and 2^256-1 as above, token 5 burned) and waits
 * until /v1 serves it whole: indexed, every document read, the HTML animation stored, the traits
 * counted. Returns its address (lowercase) and the wallet holding its tokens.
 */
export async function deployHostileCollection(
  request: APIRequestContext,
  origin: string,
): Promise<{ address: string; holder: string }> {
  const demo = await issueDemoToken(request)
  const uris = hostileUris(origin)
  const address = (
    await deployE2EContract('E2EHostileText', [
      HOSTILE_NAME,
      `SYM${RLO}`,
      uris.map(([id]) => id),
      uris.map(([, uri]) => uri),
      [5n],
    ])
  ).toLowerCase()
  let holder = ''
  await expect
    .poll(
      async () => {
        const list = await pacedGet<{ data?: Token[] }>(
          request,
          demo,
          `/v1/collections/${address}/nfts?limit=10&include_metadata=true&standard=all`,
        )
        const tokens = list.body.data ?? []
        if (tokens.length !== 5) return `${tokens.length} tokens`
        if (!tokens.every((t) => t.metadata_status === 'ok')) return 'metadata pending'
        if (!tokens.find((t) => t.token_id === '1')?.animation_media_url) return 'animation pending'
        holder = tokens[0]!.current_owner
        const traits = await pacedGet<{
          data?: { trait_types: { trait_type: string; values: unknown[] }[] }
        }>(request, demo, `/v1/collections/${address}/traits?standard=all`)
        const level = traits.body.data?.trait_types.find((t) => t.trait_type === 'Level')
        return level?.values.length === 2 ? 'ready' : 'traits pending'
      },
      { timeout: 180_000, intervals: [2000] },
    )
    .toBe('ready')
  return { address, holder }
}

/**
 * Whether `needle` (its last occurrence in the element's text) is shown in reading order: each
 * character right of the one before it on the same line, or on a later line. A bidi override
 * that leaks out of chain text shows it right to left.
 */
export async function inReadingOrder(element: Locator, needle: string): Promise<boolean> {
  const positions = await element.evaluate((root, needle) => {
    const nodes: Text[] = []
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT)
    for (let node = walker.nextNode(); node; node = walker.nextNode()) nodes.push(node as Text)
    const text = nodes.map((n) => n.data).join('')
    const start = text.lastIndexOf(needle)
    if (start < 0) throw new Error(`"${needle}" is not in "${text.slice(-120)}"`)
    const out: { x: number; top: number }[] = []
    for (let i = start; i < start + needle.length; i++) {
      if (/\s/.test(text[i]!)) continue
      let offset = i
      const node = nodes.find((n) => {
        if (offset < n.data.length) return true
        offset -= n.data.length
        return false
      })!
      const range = document.createRange()
      range.setStart(node, offset)
      range.setEnd(node, offset + 1)
      const rect = range.getBoundingClientRect()
      out.push({ x: rect.left + rect.width / 2, top: rect.top })
    }
    return out
  }, needle)
  return positions.every(
    (p, i) =>
      i === 0 ||
      p.top > positions[i - 1]!.top + 4 ||
      (Math.abs(p.top - positions[i - 1]!.top) <= 4 && p.x > positions[i - 1]!.x),
  )
}

/** How far the page scrolls sideways (0: it does not) at 1280 and at 390 px. */
export async function sidewaysScroll(page: Page): Promise<number[]> {
  const widths: number[] = []
  for (const viewport of VIEWPORTS) {
    await page.setViewportSize(viewport)
    await page.waitForTimeout(300)
    widths.push(
      await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth),
    )
  }
  await page.setViewportSize(VIEWPORTS[0])
  return widths
}
