/**
 * Thumbnails on the media path (docs/api.md, "Media path"): stored images
 * (written by the indexer's media store) served through the real web server
 * as GET /v1/media?url=…&width=…, made by sharp on the first request and
 * cached on disk. Checked with sharp's own reading of the answers.
 */
import { createHash, randomBytes } from 'node:crypto'
import { existsSync } from 'node:fs'
import { unlink } from 'node:fs/promises'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import sharp from 'sharp'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { mediaPath as storedFile, thumbnailPath } from '@/db/media-path'
import { storeMedia } from '@/indexer/metadata/media-store'
import { createMediaHandler } from '@/server/rest/media/media.handler'
import { type ApiServer, startApiServer } from '@/test/api-client'
import { tempMediaDir } from '@/test/api-fixtures'
import { createTestDatabase, type TestDatabase } from '@/test/db'

const URLS = {
  wide: 'https://img.example/wide.png',
  small: 'https://img.example/small.png',
  svg: 'https://img.example/hostile.svg',
  linking: 'https://img.example/linking.svg',
  gif: 'https://img.example/animated.gif',
  bomb: 'https://img.example/bomb.png',
  /** 10,000 × 5,000: under sharp's own default limit, over the service's 40 megapixels. */
  wideBomb: 'https://img.example/wide-bomb.png',
  video: 'https://img.example/clip.mp4',
  big: (i: number) => `https://img.example/big-${i}.jpg`,
}

const HOSTILE_SVG = `<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10" viewBox="0 0 10 10" onload="alert(1)">
  <script>alert(document.cookie)</script>
  <rect width="10" height="10" fill="#0a0"/>
</svg>`

let db: TestDatabase
let api: ApiServer
/** A local host an SVG points at: rendering a thumbnail must never reach it. */
let lure: Server
let lureHits = 0
let mediaDir: string
const sha: Record<string, string> = {}

/** CRC-32 of PNG chunks (node 20 has no zlib.crc32). */
function crc32(bytes: Buffer): number {
  let c = ~0
  for (const b of bytes) {
    c ^= b
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0xedb88320 : c >>> 1
  }
  return ~c >>> 0
}

function chunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4)
  length.writeUInt32BE(data.length)
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data])
  const crc = Buffer.alloc(4)
  crc.writeUInt32BE(crc32(body))
  return Buffer.concat([length, body, crc])
}

/** A PNG that declares width × height pixels (100,000² is 40 GB decoded) in a few dozen bytes. */
function pngBomb(width: number, height: number): Buffer {
  const ihdr = Buffer.alloc(13)
  ihdr.writeUInt32BE(width, 0)
  ihdr.writeUInt32BE(height, 4)
  ihdr.set([8, 6, 0, 0, 0], 8)
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', Buffer.from([0x78, 0x9c, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01])),
    chunk('IEND', Buffer.alloc(0)),
  ])
}

/** Random pixels: a JPEG that takes sharp a while to decode and resize. */
function noiseJpeg(size: number): Promise<Buffer> {
  return sharp(randomBytes(size * size * 3), { raw: { width: size, height: size, channels: 3 } })
    .jpeg({ quality: 95 })
    .toBuffer()
}

async function store(url: string, bytes: Buffer) {
  const stored = await storeMedia(db.pool, mediaDir, url, bytes)
  if (!stored) throw new Error(`not stored: ${url}`)
  sha[url] = stored.sha256
}

const mediaPath = (url: string, extra = '') => `/v1/media?url=${encodeURIComponent(url)}${extra}`

async function envelope(res: Response) {
  expect(res.headers.get('content-type')).toMatch(/^application\/json/)
  return ((await res.json()) as { error: { code: string; message: string; request_id: string } }).error
}

beforeAll(async () => {
  db = await createTestDatabase()
  mediaDir = tempMediaDir()
  const frame = (background: string) =>
    sharp({ create: { width: 300, height: 200, channels: 3, background } })
      .png()
      .toBuffer()
  await store(
    URLS.wide,
    await sharp({ create: { width: 1000, height: 600, channels: 4, background: '#3366ccff' } })
      .png()
      .toBuffer(),
  )
  await store(
    URLS.small,
    await sharp({ create: { width: 40, height: 30, channels: 3, background: 'white' } })
      .png()
      .toBuffer(),
  )
  await store(URLS.svg, Buffer.from(HOSTILE_SVG))
  lure = createServer((_req, res) => {
    lureHits++
    res.writeHead(200, { 'content-type': 'image/png' }).end(Buffer.alloc(0))
  })
  await new Promise<void>((resolve) => lure.listen(0, '127.0.0.1', resolve))
  const lurePort = (lure.address() as AddressInfo).port
  await store(
    URLS.linking,
    Buffer.from(`<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="10" height="10">
  <image href="http://127.0.0.1:${lurePort}/a.png" width="10" height="10"/>
  <image xlink:href="http://127.0.0.1:${lurePort}/b.png" width="10" height="10"/>
  <image href="file:///etc/hostname" width="10" height="10"/>
  <use href="http://127.0.0.1:${lurePort}/c.svg#x"/>
  <rect width="5" height="5" fill="#00f"/>
</svg>`),
  )
  await store(
    URLS.gif,
    await sharp([await frame('red'), await frame('blue'), await frame('green')], { join: { animated: true } })
      .gif()
      .toBuffer(),
  )
  await store(URLS.bomb, pngBomb(100_000, 100_000))
  await store(URLS.wideBomb, pngBomb(10_000, 5_000))
  await store(
    URLS.video,
    Buffer.concat([Buffer.from([0, 0, 0, 0x18]), Buffer.from('ftypisom'), Buffer.alloc(64)]),
  )
  for (let i = 0; i < 6; i++) await store(URLS.big(i), await noiseJpeg(2000))
  api = await startApiServer(db.url, { MEDIA_DIR: mediaDir })
}, 120_000)

afterAll(async () => {
  await new Promise<void>((resolve) => (lure ? lure.close(() => resolve()) : resolve()))
  await api?.close()
  await db?.drop()
})

describe('thumbnails on the media path', () => {
  it('serves a stored PNG at 256 px as WebP, cached on disk, with immutable caching and a strong ETag', async () => {
    const res = await api.request(mediaPath(URLS.wide, '&width=256'))
    expect(res.status).toBe(200)
    const body = Buffer.from(await res.arrayBuffer())
    expect(res.headers.get('content-type')).toBe('image/webp')
    const meta = await sharp(body).metadata()
    expect(meta).toMatchObject({ format: 'webp', width: 256, height: 154 })
    expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable')
    expect(res.headers.get('x-content-type-options')).toBe('nosniff')
    expect(res.headers.get('content-security-policy')).toBe(
      "default-src 'none'; style-src 'unsafe-inline'; sandbox",
    )
    expect(res.headers.get('content-length')).toBe(String(body.length))
    const etag = `"${createHash('sha256').update(body).digest('hex')}"`
    expect(res.headers.get('etag')).toBe(etag)
    // Not the original's ETag: another representation.
    expect(etag).not.toBe(`"${sha[URLS.wide]}"`)
    expect(existsSync(thumbnailPath(mediaDir, sha[URLS.wide]!, 256))).toBe(true)

    const again = await api.request(mediaPath(URLS.wide, '&width=256'))
    expect(again.headers.get('etag')).toBe(etag)
    expect(Buffer.from(await again.arrayBuffer()).equals(body)).toBe(true)

    const notModified = await api.request(mediaPath(URLS.wide, '&width=256'), {
      headers: { 'If-None-Match': etag },
    })
    expect(notModified.status).toBe(304)
    expect(notModified.headers.get('etag')).toBe(etag)
    expect(await notModified.text()).toBe('')

    const head = await api.request(mediaPath(URLS.wide, '&width=256'), { method: 'HEAD' })
    expect(head.status).toBe(200)
    expect(head.headers.get('content-length')).toBe(String(body.length))

    for (const width of [64, 512]) {
      const other = await api.request(mediaPath(URLS.wide, `&width=${width}`))
      expect((await sharp(Buffer.from(await other.arrayBuffer())).metadata()).width).toBe(width)
    }
  })

  it('never upscales: a 40 px image stays 40 px wide at width=512', async () => {
    const res = await api.request(mediaPath(URLS.small, '&width=512'))
    expect(res.status).toBe(200)
    expect(await sharp(Buffer.from(await res.arrayBuffer())).metadata()).toMatchObject({
      width: 40,
      height: 30,
    })
  })

  it('answers 400 in the envelope for any width but 64, 256 and 512', async () => {
    for (const extra of [
      '&width=100',
      '&width=0256',
      '&width=256.0',
      '&width=',
      '&width=-64',
      '&width=256&width=256',
    ]) {
      const res = await api.request(mediaPath(URLS.wide, extra))
      expect(res.status, extra).toBe(400)
      const error = await envelope(res)
      expect(error.code).toBe('INVALID_ARGUMENT')
      expect(error.message).toMatch(/width/)
      expect(error.request_id).toBe(res.headers.get('x-request-id'))
    }
    // Checked before the lookup: an unknown location with a bad width is a 400 as well.
    expect((await api.request(mediaPath('https://img.example/none.png', '&width=7'))).status).toBe(400)
    expect((await api.request(mediaPath('https://img.example/none.png', '&width=64'))).status).toBe(404)
  })

  it('rasterizes an SVG to PNG at the width, with nothing of its script left; the SVG itself only under the sandbox', async () => {
    const res = await api.request(mediaPath(URLS.svg, '&width=64'))
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('image/png')
    const body = Buffer.from(await res.arrayBuffer())
    expect(await sharp(body).metadata()).toMatchObject({ format: 'png', width: 64, height: 64 })
    const text = body.toString('latin1')
    expect(text).not.toMatch(/script|alert|onload|<svg/i)
    const { data } = await sharp(body).raw().toBuffer({ resolveWithObject: true })
    // The drawing is there (green), not an empty canvas.
    expect([data[0], data[1], data[2]]).toEqual([0, 170, 0])

    const original = await api.request(mediaPath(URLS.svg))
    expect(original.headers.get('content-type')).toBe('image/svg+xml')
    expect(original.headers.get('content-security-policy')).toContain('sandbox')
    expect(original.headers.get('x-content-type-options')).toBe('nosniff')
  })

  it('renders an SVG without fetching what it links to (no request leaves the server, no file is read)', async () => {
    const res = await api.request(mediaPath(URLS.linking, '&width=64'))
    expect(res.status).toBe(200)
    expect(await sharp(Buffer.from(await res.arrayBuffer())).metadata()).toMatchObject({
      format: 'png',
      width: 64,
    })
    expect(lureHits).toBe(0)
  })

  it('takes the first frame of an animated GIF', async () => {
    const res = await api.request(mediaPath(URLS.gif, '&width=64'))
    expect(res.status).toBe(200)
    const body = Buffer.from(await res.arrayBuffer())
    const meta = await sharp(body, { pages: -1 }).metadata()
    expect(meta.format).toBe('webp')
    expect(meta.pages ?? 1).toBe(1)
    expect(meta.width).toBe(64)
    const { data } = await sharp(body).raw().toBuffer({ resolveWithObject: true })
    expect(data[0]).toBeGreaterThan(200) // red, the first frame
    expect(data[2]).toBeLessThan(50)
  })

  it('refuses a decompression bomb cleanly: 404 in the envelope, the server unharmed', async () => {
    const rssBefore = process.memoryUsage().rss
    for (const url of [URLS.bomb, URLS.bomb, URLS.wideBomb, URLS.wideBomb]) {
      const res = await api.request(mediaPath(url, '&width=256'))
      expect(res.status).toBe(404)
      const error = await envelope(res)
      expect(error.code).toBe('NOT_FOUND')
      expect(error.message).toMatch(/too many pixels/)
    }
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(200 * 1024 * 1024)
    expect(existsSync(thumbnailPath(mediaDir, sha[URLS.bomb]!, 256))).toBe(false)
    // The stored bytes themselves are still served, and so is everything else.
    expect((await api.request(mediaPath(URLS.bomb))).status).toBe(200)
    expect((await api.request(mediaPath(URLS.small, '&width=64'))).status).toBe(200)
  })

  it('answers 404, not 500, when the stored file of an image is gone', async () => {
    const url = 'https://img.example/vanished.png'
    await store(
      url,
      await sharp({ create: { width: 20, height: 20, channels: 3, background: 'black' } })
        .png()
        .toBuffer(),
    )
    await unlink(storedFile(mediaDir, sha[url]!))
    const res = await api.request(mediaPath(url, '&width=64'))
    expect(res.status).toBe(404)
    expect((await envelope(res)).code).toBe('NOT_FOUND')
  })

  it('has no thumbnail of a video: 404 in the envelope naming its type', async () => {
    const res = await api.request(mediaPath(URLS.video, '&width=256'))
    expect(res.status).toBe(404)
    const error = await envelope(res)
    expect(error.code).toBe('NOT_FOUND')
    expect(error.message).toContain('video/mp4')
    expect((await api.request(mediaPath(URLS.video))).status).toBe(200)
  })

  it('bounds thumbnail making: beyond its slots and wait list, 503 with Retry-After; nothing fails', async () => {
    // The media handler as the web server builds it, with one slot and no wait list.
    const handler = createMediaHandler(api.services, {
      mediaDir,
      thumbnails: { concurrency: 1, maxWaiting: 0 },
    })
    let n = 0
    const server: Server = createServer((req, res) => void handler(req, res, `req-${++n}`))
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    try {
      const paths = [0, 1, 2, 3, 4, 5].map((i) => mediaPath(URLS.big(i), '&width=512'))
      const first = await Promise.all(paths.map((p) => fetch(`${base}${p}`)))
      const statuses = first.map((r) => r.status)
      expect(statuses.every((s) => s === 200 || s === 503)).toBe(true)
      expect(statuses.filter((s) => s === 200).length).toBeGreaterThanOrEqual(1)
      expect(statuses.filter((s) => s === 503).length).toBeGreaterThanOrEqual(1)
      for (const res of first) {
        if (res.status !== 503) {
          await res.arrayBuffer()
          continue
        }
        expect(res.headers.get('retry-after')).toBe('1')
        expect((await envelope(res)).code).toBe('SERVICE_UNAVAILABLE')
      }
      // One at a time, every one of them is made.
      for (const p of paths) {
        const res = await fetch(`${base}${p}`)
        expect(res.status).toBe(200)
        expect((await sharp(Buffer.from(await res.arrayBuffer())).metadata()).width).toBe(512)
      }
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  })

  it('keeps the original bytes, ranges and ETag without width', async () => {
    const res = await api.request(mediaPath(URLS.wide), { headers: { Range: 'bytes=0-7' } })
    expect(res.status).toBe(206)
    expect(res.headers.get('etag')).toBe(`"${sha[URLS.wide]}"`)
  })
})
