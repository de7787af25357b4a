/**
 * Locations from chain data too long to serve (docs/api.md, "Long locations"):
 * a tokenURI or image can be an inline `data:` URI of any length, which a
 * contract's view function can make megabytes long for nothing. Through the
 * real web server:
 *  - a media_url (and its thumbnails) is given only where GET /v1/media
 *    serves it: an image location over the media path's url limit gets none
 *    (the client uses image_url, as the specification's rule says);
 *  - `metadata_uri` and `image_url` longer than the served limit are left
 *    out (a collection's image is null), so a page of 100 such tokens stays
 *    small.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MAX_MEDIA_URL_LENGTH, MAX_SERVED_LOCATION_CHARS } from '@/db/media-path'
import { storeMedia } from '@/indexer/metadata/media-store'
import { type ApiServer, startApiServer } from '@/test/api-client'
import { addr, svgDataUri, tempMediaDir } from '@/test/api-fixtures'
import { createTestDatabase, type TestDatabase } from '@/test/db'

const collection = addr('long-locations')
const owner = addr('long-locations-owner')
const svg = (size: number) =>
  `<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><desc>${'x'.repeat(size)}</desc></svg>`
const dataUri = (text: string) => `data:image/svg+xml;base64,${Buffer.from(text).toString('base64')}`

/** Token id → its image (each stored in the media store) and tokenURI. */
const TOKENS = {
  1: { image: svgDataUri('short'), uri: 'ipfs://bafy/1' },
  // Longer than the media path takes as `url`, shorter than what is served.
  2: { image: dataUri(svg(MAX_MEDIA_URL_LENGTH)), uri: 'ipfs://bafy/2' },
  // Longer than what is served: a megabyte-sized inline image and document.
  3: {
    image: dataUri(svg(MAX_SERVED_LOCATION_CHARS)),
    uri: `data:application/json;base64,${'e30='.repeat(MAX_SERVED_LOCATION_CHARS)}`,
  },
} as const

let db: TestDatabase
let api: ApiServer

beforeAll(async () => {
  db = await createTestDatabase()
  const mediaDir = tempMediaDir()
  await db.pool.query(
    `INSERT INTO collections (address, name, symbol, listed, image_url) VALUES ($1, 'Long', 'LONG', true, $2)`,
    [collection, TOKENS[3].image],
  )
  for (const [id, { image, uri }] of Object.entries(TOKENS)) {
    await db.pool.query(
      `INSERT INTO tokens (collection_address, token_id, current_owner, is_burned, metadata_status, name, metadata_uri, image_url)
       VALUES ($1, $2, $3, false, 'ok', $4, $5, $6)`,
      [collection, id, owner, `Long #${id}`, uri, image],
    )
    const body = image.slice(image.indexOf(',') + 1)
    expect(await storeMedia(db.pool, mediaDir, image, Buffer.from(body, 'base64'))).not.toBeNull()
  }
  api = await startApiServer(db.url, { MEDIA_DIR: mediaDir })
}, 60_000)

afterAll(async () => {
  await api?.close()
  await db?.drop()
})

type Token = {
  token_id: string
  name: string
  metadata_uri?: string
  image_url?: string
  media_url?: string
  media_type?: string
  thumbnails?: Record<string, string>
}

describe('locations too long to serve', () => {
  it('gives a media_url only where the media path serves it', async () => {
    const { body } = await api.json<{ data: Token[] }>(
      `/v1/collections/${collection}/nfts?include_metadata=true`,
    )
    const byId = Object.fromEntries(body.data.map((t) => [t.token_id, t]))
    expect(byId['1']).toMatchObject({ image_url: TOKENS[1].image, media_type: 'image/svg+xml' })
    expect(byId['2']).toMatchObject({ image_url: TOKENS[2].image })
    for (const field of ['media_url', 'media_type', 'thumbnails']) expect(byId['2']).not.toHaveProperty(field)
    const given = body.data
      .flatMap((t) => [t.media_url, ...Object.values(t.thumbnails ?? {})])
      .filter(Boolean)
    expect(given.length).toBeGreaterThan(0)
    for (const url of given as string[]) {
      const res = await fetch(`${api.base}${new URL(url).pathname}${new URL(url).search}`)
      expect({ url: url.slice(0, 80), status: res.status }).toEqual({ url: url.slice(0, 80), status: 200 })
    }
  })

  it('leaves out a tokenURI or image longer than the served limit, and keeps the rest of the token', async () => {
    const list = await api.json<{ data: Token[] }>(`/v1/owners/${owner}/nfts`)
    const one = await api.json<{ data: Token }>(`/v1/nfts/${collection}/3`)
    for (const token of [list.body.data.find((t) => t.token_id === '3'), one.body.data]) {
      expect(token).toMatchObject({ token_id: '3', name: 'Long #3' })
      for (const field of ['metadata_uri', 'image_url', 'media_url']) expect(token).not.toHaveProperty(field)
    }
    expect(list.body.data.find((t) => t.token_id === '2')?.metadata_uri).toBe(TOKENS[2].uri)
    const page = await api.request(`/v1/owners/${owner}/nfts`)
    expect(Number(page.headers.get('content-length') ?? (await page.text()).length)).toBeLessThan(
      3 * MAX_SERVED_LOCATION_CHARS,
    )
    const { body } = await api.json<{ data: { image_url: string | null } }>(`/v1/collections/${collection}`)
    expect(body.data.image_url).toBeNull()
  })
})
