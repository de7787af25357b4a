import { createHash, type Hash, randomBytes } from 'node:crypto'
import { type FileHandle, mkdir, open, readdir, readFile, rename, stat, unlink } from 'node:fs/promises'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import type { LimitFunction } from 'p-limit'
import { mediaPath } from '@/db/media-path'
import type { Queryable } from '../store/db'
import { recordMedia } from '../store/media'
import { SinkFailure, writeToSink } from './safe-fetch'
import { isStorableMedia, sniffAnimationType, sniffMediaType } from './sniff'

export interface StoredMedia {
  sha256: string
  mediaType: string
  byteSize: number
}

/** What the media is read as: an image (sniffMediaType) or an animation (sniffAnimationType). */
export type MediaKind = 'image' | 'animation'

/** Temporary files of bodies being written, in MEDIA_DIR itself. */
const INCOMING_PREFIX = '.incoming-'

/** Bytes of a body kept for sniffing its type (the sniffers read at most the first kilobyte or so). */
const HEAD_BYTES = 4096

/**
 * One media body on its way into the store: streamed into a temporary file in
 * MEDIA_DIR as it arrives, hashed on the way, its first bytes kept for
 * sniffing. A body is never held in memory whole, so the fetches in flight
 * cost their sockets' buffers, not up to 20 MiB (50 MiB for an animation)
 * each (docs/metadata.md, "Media store").
 */
export class MediaUpload {
  private body: {
    path: string
    hash: Hash
    head: Buffer[]
    headBytes: number
    size: number
    /** Settles once the file is open (or failed to open): removing it waits for that. */
    opened: Promise<unknown>
  } | null = null

  constructor(private readonly mediaDir: string) {}

  /** Where a body is written; a new body (a retry through another gateway) starts over. */
  sink(): Writable {
    if (this.body) void removeBody(this.body)
    let opened!: () => void
    const body = {
      path: join(this.mediaDir, `${INCOMING_PREFIX}${process.pid}-${randomBytes(6).toString('hex')}`),
      hash: createHash('sha256'),
      head: [] as Buffer[],
      headBytes: 0,
      size: 0,
      opened: new Promise<void>((resolve) => {
        opened = resolve
      }),
    }
    this.body = body
    let file: FileHandle | undefined
    // The disk's faults are the service's own (SinkFailure): never counted against the media's host.
    const failed = (done: (err?: Error | null) => void) => (err: unknown) => done(new SinkFailure(err))
    return new Writable({
      construct: (done) => {
        mkdir(this.mediaDir, { recursive: true })
          .then(() => open(body.path, 'wx'))
          .then((handle) => {
            file = handle
            done()
          }, failed(done))
          .finally(opened)
      },
      write: (chunk: Buffer, _encoding, done) => {
        body.hash.update(chunk)
        body.size += chunk.length
        if (body.headBytes < HEAD_BYTES) {
          body.head.push(chunk.subarray(0, HEAD_BYTES - body.headBytes))
          body.headBytes += Math.min(chunk.length, HEAD_BYTES - body.headBytes)
        }
        file!.write(chunk).then(() => done(), failed(done))
      },
      final: (done) => {
        file!.close().then(() => done(), failed(done))
      },
      destroy: (err, done) => {
        if (!file) return done(err)
        file.close().then(
          () => done(err),
          () => done(err),
        )
      },
    })
  }

  /**
   * Moves the written body to its content-addressed place (rename: readers
   * never see half a file) and records it under `originalUrl` (media_objects,
   * media_sources by the URL's SHA-256). Null for bytes that are not media.
   */
  async store(
    db: Queryable,
    originalUrl: string,
    kind: MediaKind,
    /** Bounds the animation bodies read back whole at once (FetchLimits.animationSlots). */
    wholeReads?: LimitFunction,
  ): Promise<StoredMedia | null> {
    const body = this.body
    if (!body) throw new Error('No media body was written')
    const head = Buffer.concat(body.head)
    let mediaType = sniffMediaType(head)
    if (kind === 'animation' && mediaType === 'application/json') {
      // A JSON glTF model is told from other JSON by its content: read whole (within its cap).
      const sniffWhole = async () => sniffAnimationType(await readFile(body.path))
      mediaType = await (wholeReads ? wholeReads(sniffWhole) : sniffWhole())
    }
    if (!isStorableMedia(mediaType)) return null
    const sha256 = body.hash.digest('hex')
    const path = mediaPath(this.mediaDir, sha256)
    const exists = await stat(path).then(
      (s) => s.size === body.size,
      () => false,
    )
    if (!exists) {
      await mkdir(join(this.mediaDir, sha256.slice(0, 2), sha256.slice(2, 4)), { recursive: true })
      await rename(body.path, path)
    }
    const stored = { sha256, mediaType, byteSize: body.size }
    await recordMedia(db, stored, originalUrl)
    return stored
  }

  /** Removes what is left of the temporary file (always call, stored or not). */
  async discard(): Promise<void> {
    if (this.body) await removeBody(this.body)
    this.body = null
  }
}

/** Removes a body's temporary file once it is open (a removal before would miss the file). */
async function removeBody(body: { path: string; opened: Promise<unknown> }): Promise<void> {
  await body.opened
  await unlink(body.path).catch(() => undefined)
}

/**
 * Stores media bytes already in memory (a `data:` location, a test): as a
 * fetched body is, through a MediaUpload. Returns null for bytes that are not media.
 */
export async function storeMedia(
  db: Queryable,
  mediaDir: string,
  originalUrl: string,
  bytes: Buffer,
  kind: MediaKind = 'image',
): Promise<StoredMedia | null> {
  const upload = new MediaUpload(mediaDir)
  try {
    await writeToSink(bytes, upload.sink())
    return await upload.store(db, originalUrl, kind)
  } finally {
    await upload.discard()
  }
}

/**
 * Removes the temporary files of bodies a stopped process was writing (older
 * than `olderThanMs`: a running one may still be writing the newer ones).
 * Returns how many were removed.
 */
export async function removeStaleUploads(mediaDir: string, olderThanMs = 3_600_000): Promise<number> {
  const names = await readdir(mediaDir).catch(() => [] as string[])
  let removed = 0
  for (const name of names) {
    if (!name.startsWith(INCOMING_PREFIX)) continue
    const file = join(mediaDir, name)
    const modified = await stat(file).then(
      (s) => s.mtimeMs,
      () => Date.now(),
    )
    if (Date.now() - modified < olderThanMs) continue
    if (
      await unlink(file).then(
        () => true,
        () => false,
      )
    )
      removed++
  }
  return removed
}
