/**
 * Animations and thumbnails, end to end (docs/metadata.md, "Animations"):
 * a local host serves documents whose `animation_url` is a video, HTML, SVG
 * or a 3D model, beside PNG and SVG images; the indexer's token job fetches
 * and stores them through the same fetcher as images (sniffed types, own size
 * cap, SSRF rules), and the API lists the stored animation and the image's
 * thumbnails with include_metadata=true, and serves them on the media path.
 */

import pLimit from 'p-limit'
import sharp from 'sharp'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServer, type TestServer } from '@/indexer/test/http-server'
import { type ApiServer, startApiServer } from '@/test/api-client'
import { addr, fixturePool, SimulatedChain, tempMediaDir, ZERO } from '@/test/api-fixtures'
import { createTestDatabase, type TestDatabase } from '@/test/db'

const collection = addr('animations')
const owner = addr('animation-owner')
const MiB = 1024 * 1024

const mp4 = (size: number) =>
  Buffer.concat([Buffer.from([0, 0, 0, 0x18]), Buffer.from('ftypisom'), Buffer.alloc(size - 12, 7)])
const WEBM = Buffer.concat([
  Buffer.from([0x1a, 0x45, 0xdf, 0xa3, 0x9f, 0x42, 0x86, 0x81, 0x01]),
  Buffer.from('B\u0082\u0084webm', 'latin1'),
  Buffer.alloc(256, 1),
])
const HTML =
  '<!DOCTYPE html><html><body><script>parent.document.cookie</script><canvas></canvas></body></html>'
const SVG_ART =
  '<svg xmlns="http://www.w3.org/2000/svg" width="20" height="20" onload="alert(1)"><script>alert(2)</script><circle r="9" cx="10" cy="10"/></svg>'
const GLB = Buffer.concat([Buffer.from('glTF'), Buffer.from([2, 0, 0, 0, 64, 0, 0, 0]), Buffer.alloc(52)])
const GLTF = JSON.stringify({ asset: { version: '2.0' }, scenes: [{ nodes: [0] }], nodes: [{}] })

let db: TestDatabase
let host: TestServer
let privateHost: TestServer
let api: ApiServer
let png: Buffer

/** Token id -> its document (image and animation_url relative to the host, or absolute). */
function documents(a: string, p: string): Record<number, Record<string, unknown>> {
  return {
    1: { name: 'Video', image: `${a}/img/pic.png`, animation_url: `${a}/anim/clip.mp4` },
    2: { name: 'WebM', image: `${a}/img/pic.svg`, animation_url: `${a}/anim/clip.webm` },
    3: { name: 'Page', image: `${a}/img/pic.png`, animation_url: `${a}/anim/page.html` },
    4: { name: 'SVG animation', animation_url: `${a}/anim/art.svg` },
    5: { name: 'GLB', animation_url: `${a}/anim/model.glb` },
    6: { name: 'glTF', animation_url: `${a}/anim/model.gltf` },
    // Over the image cap (1 MiB), under the animation cap (4 MiB): the video is stored, the image not.
    7: { name: 'Big', image: `${a}/img/big.png`, animation_url: `${a}/anim/big.mp4` },
    8: { name: 'Huge', image: `${a}/img/pic.png`, animation_url: `${a}/anim/huge.mp4` },
    9: { name: 'Missing', image: `${a}/img/pic.png`, animation_url: `${a}/anim/missing.mp4` },
    10: { name: 'Private', image: `${a}/img/pic.png`, animation_url: `${p}/anim/clip.mp4` },
    11: { name: 'Same', image: `${a}/img/pic.png`, animation_url: `${a}/img/pic.png` },
    12: {
      name: 'Inline',
      animation_url: `data:text/html;base64,${Buffer.from(HTML).toString('base64')}`,
    },
    13: { name: 'Not media', image: `${a}/img/pic.png`, animation_url: `${a}/anim/words.txt` },
  }
}

beforeAll(async () => {
  png = await sharp({ create: { width: 300, height: 200, channels: 3, background: '#c33' } })
    .png()
    .toBuffer()
  // Content-Type is what a hostile host claims: only the bytes count.
  const bytes = (body: Buffer | string) => (_req: unknown, res: import('node:http').ServerResponse) =>
    res.writeHead(200, { 'content-type': 'image/png' }).end(body)
  privateHost = await startServer({ '/anim/*': bytes(mp4(1024)) })
  host = await startServer({
    '/doc/*': (req, res) => {
      const id = Number(req.url!.split('/').pop())
      const doc = documents(host.origin, privateHost.origin)[id]
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(doc))
    },
    '/img/pic.png': bytes(png),
    '/img/pic.svg': bytes(SVG_ART),
    '/img/big.png': bytes(Buffer.concat([png, Buffer.alloc(3 * MiB)])),
    '/anim/clip.mp4': bytes(mp4(64 * 1024)),
    '/anim/clip.webm': bytes(WEBM),
    '/anim/page.html': bytes(HTML),
    '/anim/art.svg': bytes(SVG_ART),
    '/anim/model.glb': bytes(GLB),
    '/anim/model.gltf': bytes(GLTF),
    '/anim/big.mp4': bytes(mp4(3 * MiB)),
    '/anim/huge.mp4': bytes(mp4(5 * MiB)),
    '/anim/missing.mp4': (_req, res) => res.writeHead(404).end('gone'),
    '/anim/words.txt': bytes('just some words'),
  })
  db = await createTestDatabase()
  const mediaDir = tempMediaDir()
  const pool = fixturePool(db.url)
  try {
    const chain = new SimulatedChain(pool)
    await chain.init()
    chain.contracts.set(collection, {
      name: 'Animations',
      symbol: 'ANIM',
      deployBlock: 1n,
      tokenUri: (id) => `${host.origin}/doc/${id}`,
    })
    await chain.mine(1, (_b, emit) => {
      for (let id = 1n; id <= 13n; id++) emit({ collection, tokenId: id, from: ZERO, to: owner })
    })
    await chain.describeCollections()
    await chain.fetchTokenMetadata(mediaDir, {
      limits: {
        allowHosts: new Set([`127.0.0.1:${host.port}`]),
        timeoutMs: 5_000,
        maxMetadataBytes: MiB,
        maxMediaBytes: MiB,
        maxAnimationBytes: 4 * MiB,
        animationSlots: pLimit(2),
      },
      batch: 20,
    })
  } finally {
    await pool.end()
  }
  api = await startApiServer(db.url, { MEDIA_DIR: mediaDir })
}, 120_000)

afterAll(async () => {
  await api?.close()
  await db?.drop()
  await host?.close()
  await privateHost?.close()
})

interface NftBody {
  metadata_status: string
  media_url?: string
  media_type?: string
  animation_url?: string
  animation_media_url?: string
  animation_media_type?: string
  thumbnails?: Record<string, string>
}

async function nft(id: number, query = '?include_metadata=true'): Promise<NftBody> {
  const res = await api.request(`/v1/nfts/${collection}/${id}${query}`)
  expect(res.status).toBe(200)
  return ((await res.json()) as { data: NftBody }).data
}

/** A media URL as the API gives it (PUBLIC_URL's origin), as a path of the test server. */
const local = (url: string) => url.replace('http://api.test', '')

describe('animation_url media', () => {
  it('stores each animation with its type sniffed from the bytes; a failed animation leaves the token ok', async () => {
    const expected: Record<number, string | undefined> = {
      1: 'video/mp4',
      2: 'video/webm',
      3: 'text/html',
      4: 'image/svg+xml',
      5: 'model/gltf-binary',
      6: 'model/gltf+json',
      7: 'video/mp4',
      8: undefined, // over the animation cap
      9: undefined, // 404
      10: undefined, // a private address
      11: 'image/png', // the image's own location
      12: 'text/html', // data: URI
      13: undefined, // not media
    }
    for (const [id, type] of Object.entries(expected)) {
      const body = await nft(Number(id))
      expect(body.metadata_status, `token ${id}`).toBe('ok')
      expect(body.animation_url, `token ${id}`).toBeDefined()
      expect(body.animation_media_type, `token ${id}`).toBe(type)
      if (type) {
        expect(body.animation_media_url).toBe(
          `http://api.test/v1/media?url=${encodeURIComponent(body.animation_url!)}`,
        )
      } else {
        expect(body.animation_media_url, `token ${id}`).toBeUndefined()
      }
    }
  })

  it('keeps the image cap for images: an image the size of a stored video is not stored', async () => {
    const big = await nft(7)
    expect(big.media_url).toBeUndefined()
    expect(big.thumbnails).toBeUndefined()
    expect(big.animation_media_type).toBe('video/mp4')
    const { rows } = await db.pool.query(
      `SELECT mo.byte_size FROM media_sources ms JOIN media_objects mo ON mo.sha256 = ms.media_sha256
        WHERE ms.url = $1`,
      [`${host.origin}/anim/big.mp4`],
    )
    expect(rows).toEqual([{ byte_size: 3 * MiB }])
  })

  it('serves a stored animation from the media path: HTML and SVG only under the sandbox, video in ranges', async () => {
    const page = await api.request(local((await nft(3)).animation_media_url!))
    expect(page.status).toBe(200)
    expect(page.headers.get('content-type')).toBe('text/html')
    expect(page.headers.get('content-security-policy')).toBe(
      "default-src 'none'; style-src 'unsafe-inline'; sandbox",
    )
    expect(page.headers.get('x-content-type-options')).toBe('nosniff')
    expect(await page.text()).toBe(HTML)

    const svg = await api.request(local((await nft(4)).animation_media_url!))
    expect(svg.headers.get('content-type')).toBe('image/svg+xml')
    expect(svg.headers.get('content-security-policy')).toContain('sandbox')
    await svg.arrayBuffer()

    const video = await api.request(local((await nft(1)).animation_media_url!), {
      headers: { Range: 'bytes=0-11' },
    })
    expect(video.status).toBe(206)
    expect(video.headers.get('content-type')).toBe('video/mp4')
    expect(
      Buffer.from(await video.arrayBuffer())
        .subarray(4, 8)
        .toString(),
    ).toBe('ftyp')
  })

  it('lists thumbnails of a stored PNG or SVG image, which the media path serves at their width', async () => {
    for (const [id, format] of [
      [1, 'webp'],
      [2, 'png'],
    ] as const) {
      const body = await nft(id)
      expect(Object.keys(body.thumbnails!)).toEqual(['64', '256', '512'])
      for (const [width, url] of Object.entries(body.thumbnails!)) {
        expect(url).toBe(`${body.media_url}&width=${width}`)
      }
      const res = await api.request(local(body.thumbnails!['256']!))
      expect(res.status).toBe(200)
      const meta = await sharp(Buffer.from(await res.arrayBuffer())).metadata()
      expect(meta.format).toBe(format)
      // The PNG is 300 px wide (never upscaled); the SVG is rendered at the width.
      expect(meta.width).toBe(256)
    }
    const wide = await api.request(local((await nft(1)).thumbnails!['512']!))
    expect((await sharp(Buffer.from(await wide.arrayBuffer())).metadata()).width).toBe(300)
    // No image, or an animation only: no thumbnails.
    expect((await nft(4)).thumbnails).toBeUndefined()
  })

  it('adds nothing without include_metadata=true: a client of the specification sees what it saw before', async () => {
    const plain = await nft(1, '')
    for (const field of ['animation_url', 'animation_media_url', 'animation_media_type', 'thumbnails']) {
      expect(plain).not.toHaveProperty(field)
    }
    expect(plain.media_type).toBe('image/png')
    const list = await api.request(`/v1/collections/${collection}/nfts`)
    const text = await list.text()
    expect(text).not.toMatch(/animation_media|thumbnails/)
    const withMetadata = await api.request(`/v1/collections/${collection}/nfts?include_metadata=true`)
    const page = (await withMetadata.json()) as { data: NftBody[] }
    expect(page.data.filter((n) => n.animation_media_type === 'video/mp4')).toHaveLength(2)
    expect(page.data.filter((n) => n.thumbnails)).toHaveLength(8)
  })
})
