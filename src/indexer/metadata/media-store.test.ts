/**
 * Media bodies are streamed into the store, never held whole (docs/metadata.md,
 * "Media store"): twelve tokens whose images are 16 MiB each, fetched at once,
 * raise the process's buffer memory by far less than one of them each; every
 * image is stored byte for byte, and no temporary file is left behind.
 */
import { createHash } from 'node:crypto'
import { mkdtemp, readdir, readFile, utimes, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import pino from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { mediaPath } from '@/db/media-path'
import { createTestDatabase, type TestDatabase } from '@/test/db'
import { startServer, type TestServer } from '../test/http-server'
import type { FetchLimits } from './document'
import { removeStaleUploads } from './media-store'
import { processToken, type TokenJob, type TokenJobDeps } from './token-job'

const TOKENS = 12
const IMAGE_BYTES = 16 * 1024 * 1024
const CHUNK = Buffer.alloc(64 * 1024, 0x5a)
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])

/** An image's first chunk: the PNG signature and the id in its location (ERC-1155: 64 hex digits). */
function imageHead(id: string): Buffer {
  return Buffer.concat([PNG_SIGNATURE, Buffer.from(`token ${id}`.padEnd(CHUNK.length - 8, ' '))])
}

/** The SHA-256 of token `id`'s whole image: its head, then CHUNK's bytes up to IMAGE_BYTES. */
function imageSha256(id: bigint): string {
  const hash = createHash('sha256').update(imageHead(id.toString(16).padStart(64, '0')))
  for (let sent = CHUNK.length; sent < IMAGE_BYTES; sent += CHUNK.length) hash.update(CHUNK)
  return hash.digest('hex')
}

let db: TestDatabase
let server: TestServer
let mediaDir: string

beforeAll(async () => {
  server = await startServer({
    '/meta/*': (req, res) => {
      const id = req.url!.split('/').pop()
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ name: `Big ${id}`, image: `${server.origin}/img/${id}` }))
    },
    // Streamed from one shared chunk: the server's own memory stays small.
    '/img/*': (req, res) => {
      res.writeHead(200, { 'content-type': 'image/png', 'content-length': IMAGE_BYTES })
      let sent = 0
      const pump = () => {
        while (sent < IMAGE_BYTES) {
          const chunk = sent === 0 ? imageHead(req.url!.split('/').pop()!) : CHUNK
          sent += chunk.length
          if (!res.write(chunk)) return
        }
        res.end()
      }
      res.on('drain', pump)
      pump()
    },
  })
  db = await createTestDatabase()
  mediaDir = await mkdtemp(path.join(os.tmpdir(), 'media-store-'))
}, 120_000)

afterAll(async () => {
  await server?.close()
  await db?.drop()
})

function limits(): FetchLimits {
  return {
    gateways: { ipfs: [], arweave: [] },
    allowHosts: new Set([new URL(server.origin).host]),
    timeoutMs: 60_000,
    maxMetadataBytes: 1024 * 1024,
    maxMediaBytes: 20 * 1024 * 1024,
  }
}

function deps(dir: string): TokenJobDeps {
  return {
    pool: db.pool,
    logger: pino({ level: 'silent' }),
    limits: limits(),
    mediaDir: dir,
    multicallEnabled: () => false,
    maxAttempts: 3,
    retryBaseMs: 1_000,
    concurrency: TOKENS,
  } as unknown as TokenJobDeps
}

const job = (id: number): TokenJob => ({
  id: String(id),
  collection: '0x0000000000000000000000000000000000000001',
  tokenId: BigInt(id),
  attempts: 0,
  nextAttemptAt: 'x',
  recheck: false,
  media: null,
})

/** An ERC-1155 URI event's value: no contract call is needed for the document's location. */
const uri = () => ({ erc1155: true, eventUri: `${server.origin}/meta/{id}`, result: null })

describe('media store', () => {
  it('streams large images to disk: memory stays far below their size, every byte is stored', async () => {
    const baseline = process.memoryUsage().arrayBuffers
    let peak = baseline
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().arrayBuffers)
    }, 5)
    const ids = Array.from({ length: TOKENS }, (_, i) => i + 1)
    const results = await Promise.all(ids.map((id) => processToken(deps(mediaDir), limits(), job(id), uri())))
    clearInterval(sampler)
    peak = Math.max(peak, process.memoryUsage().arrayBuffers)

    const grownMiB = (peak - baseline) / 1024 / 1024
    console.log(`media store: ${TOKENS} images of 16 MiB at once, buffers grew by ${grownMiB.toFixed(1)} MiB`)
    // Held whole, the twelve bodies alone are 192 MiB (and their concatenation as much again).
    expect(grownMiB).toBeLessThan(96)

    for (const [i, result] of results.entries()) {
      expect(result.outcome).toBe('ok')
      expect(result.mediaSha256).toBe(imageSha256(BigInt(ids[i]!)))
      const stored = await readFile(mediaPath(mediaDir, result.mediaSha256!))
      expect(stored.length).toBe(IMAGE_BYTES)
      expect(createHash('sha256').update(stored).digest('hex')).toBe(result.mediaSha256)
    }
    const { rows } = await db.pool.query('SELECT count(*)::int AS n FROM media_sources')
    expect(rows[0].n).toBe(TOKENS)
    expect((await readdir(mediaDir)).filter((name) => name.startsWith('.incoming-'))).toEqual([])
  }, 120_000)

  it('a media store that cannot write (the disk) fails the step, not the token or its host', async () => {
    // A media directory under a regular file: every write fails (ENOTDIR), even as root.
    const notADirectory = path.join(mediaDir, 'not-a-directory')
    await writeFile(notADirectory, 'x')
    const failing = processToken(deps(path.join(notADirectory, 'media')), limits(), job(1), uri())
    // Not a named outcome: the pipeline keeps the token due and tries it again (token-pipeline.ts).
    await expect(failing).rejects.toMatchObject({ code: 'ENOTDIR' })
  })

  it('removes the temporary files a stopped process left, not those being written', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'media-stale-'))
    const left = path.join(dir, '.incoming-1-stale')
    const writing = path.join(dir, '.incoming-2-fresh')
    await writeFile(left, 'half a body')
    await writeFile(writing, 'a body')
    const twoHoursAgo = new Date(Date.now() - 2 * 3_600_000)
    await utimes(left, twoHoursAgo, twoHoursAgo)
    expect(await removeStaleUploads(dir)).toBe(1)
    expect(await readdir(dir)).toEqual(['.incoming-2-fresh'])
  })
})
