/**
 * GET/HEAD /v1/media?url=<original location> (docs/api.md, "Media path"): the stored copy of
 * an NFT's original media bytes. Served by plain node:http, because
 * trpc-to-openapi only answers JSON; described in /openapi.json by
 * media.openapi.ts.
 *
 *  - Public: no credential (<img> tags cannot send one and keys never go in
 *    URLs); limited per client IP (RATE_LIMIT_MEDIA).
 *  - Only bytes the indexer already stored: media_sources (by SHA-256 of the
 *    url) → media_objects → the content-addressed file. Never fetches: an
 *    unknown url is a 404 envelope, so the path is no open proxy.
 *  - Headers: the sniffed Content-Type, nosniff, a CSP that neuters scripts in
 *    SVG/HTML, a strong ETag (the SHA-256 of the bytes), immutable caching.
 *  - Byte ranges (one range per request) for video: 206, or 416 when the
 *    range cannot be satisfied. If-Range and If-None-Match are honoured.
 *  - `width` (one of THUMBNAIL_WIDTHS): a thumbnail of a stored image instead
 *    (thumbnails.ts), with the same headers; its ETag is the SHA-256 of the
 *    thumbnail's bytes. No ranges (a thumbnail is small).
 */

import { createHash } from 'node:crypto'
import { createReadStream } from 'node:fs'
import { stat } from 'node:fs/promises'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { pipeline } from 'node:stream/promises'
import { MAX_MEDIA_URL_LENGTH, mediaPath, THUMBNAIL_WIDTHS } from '@/db/media-path'
import { findMedia } from '@/db/queries/media'
import { queryInput } from '@/server/api/internals/routes'
import { RequestAccess } from '@/server/credentials/access'
import { ApiError } from '@/server/errors/api-error'
import { errorBody } from '@/server/errors/error-body'
import { methodNotAllowed } from '@/server/errors/method-not-allowed'
import { toApiError, unknownParametersMessage } from '@/server/errors/to-api-error'
import { clientIp } from '@/server/http/client-ip'
import type { Services } from '@/server/services/web-services'
import { type ThumbnailOptions, Thumbnails } from './thumbnails'

export const MEDIA_PATH = '/v1/media'

/** Whether a request URL addresses the media path (query aside; a trailing slash tolerated). */
export function isMediaRequest(url: string | undefined): boolean {
  if (!url) return false
  const q = url.indexOf('?')
  const path = (q === -1 ? url : url.slice(0, q)).toLowerCase()
  return path === MEDIA_PATH || path === `${MEDIA_PATH}/`
}

export const MEDIA_CSP = "default-src 'none'; style-src 'unsafe-inline'; sandbox"
export const MEDIA_CACHE_CONTROL = 'public, max-age=31536000, immutable'

export type ByteRange = { start: number; end: number }

/**
 * The Range header against a representation of `size` bytes:
 * undefined = serve the whole (no header, another unit, or several ranges —
 * which RFC 9110 lets a server answer with 200); 'unsatisfiable' = 416.
 */
export function parseRange(
  header: string | undefined,
  size: number,
): ByteRange | 'unsatisfiable' | undefined {
  if (header === undefined) return undefined
  const match = /^\s*bytes\s*=\s*(.*)$/i.exec(header)
  if (!match) return undefined
  const specs = match[1]!.split(',').map((s) => s.trim())
  if (specs.length !== 1) return undefined
  const spec = /^(\d*)-(\d*)$/.exec(specs[0]!)
  if (!spec || (spec[1] === '' && spec[2] === '')) return 'unsatisfiable'
  if (spec[1] === '') {
    // Suffix range: the last N bytes.
    const length = Number(spec[2])
    if (length === 0 || size === 0) return 'unsatisfiable'
    return { start: Math.max(0, size - length), end: size - 1 }
  }
  const start = Number(spec[1])
  const end = spec[2] === '' ? size - 1 : Math.min(Number(spec[2]), size - 1)
  if (!Number.isSafeInteger(start) || start >= size || end < start) return 'unsatisfiable'
  return { start, end }
}

function etagMatches(header: string | undefined, etag: string): boolean {
  if (!header) return false
  return header.split(',').some((tag) => {
    const t = tag.trim()
    return t === '*' || t === etag || t === `W/${etag}`
  })
}

export interface MediaHandlerOptions {
  /** Where the indexer's media store keeps the files (MEDIA_DIR). */
  mediaDir?: string
  /** Bounds of thumbnail making (thumbnails.ts, THUMBNAIL_DEFAULTS). */
  thumbnails?: Partial<ThumbnailOptions>
}

export type MediaHandler = (req: IncomingMessage, res: ServerResponse, requestId: string) => Promise<void>

export function createMediaHandler(services: Services, options: MediaHandlerOptions = {}): MediaHandler {
  const mediaDir = options.mediaDir ?? services.config.MEDIA_DIR
  const thumbnails = new Thumbnails(mediaDir, services.logger, options.thumbnails)

  return async function handleMedia(req, res, requestId) {
    const head = req.method === 'HEAD'
    let access: RequestAccess | undefined
    const common: Record<string, string> = { 'X-Request-Id': requestId, 'X-Content-Type-Options': 'nosniff' }
    try {
      if (req.method !== 'GET' && !head) {
        // Media is answered before the /v1 layer's OPTIONS: Allow names GET and HEAD alone.
        throw methodNotAllowed(req.method, ['GET', 'HEAD'], false)
      }
      access = new RequestAccess(services.access, clientIp(req, services.config.TRUST_PROXY))
      // The slot is held until the response is over and so is the work (the query, the thumbnail):
      // a client that hangs up does not stop them, so leaving makes no room for more.
      res.once('close', () => access?.responseClosed())
      await access.limitIp('media')
      Object.assign(common, access.headers())
      const { url, width } = mediaParams(req.url ?? '')
      const media = await services.poolShares.run([access.ipSubject], () => findMedia(services.db, url))
      if (!media) throw new ApiError('NOT_FOUND', 'No stored media for this url.')
      const shared = {
        'Content-Security-Policy': MEDIA_CSP,
        'Cache-Control': MEDIA_CACHE_CONTROL,
        'Access-Control-Allow-Origin': '*',
        'Cross-Origin-Resource-Policy': 'cross-origin',
      }
      if (width !== undefined) {
        const thumbnail = await thumbnails.get(media, width)
        const etag = `"${createHash('sha256').update(thumbnail.bytes).digest('hex')}"`
        const headers: Record<string, string> = { ...common, ...shared, ETag: etag }
        if (etagMatches(req.headers['if-none-match'], etag)) {
          res.writeHead(304, headers)
          res.end()
          return
        }
        headers['Content-Type'] = thumbnail.mediaType
        headers['Content-Length'] = String(thumbnail.bytes.length)
        res.writeHead(200, headers)
        res.end(head ? undefined : thumbnail.bytes)
        return
      }
      const path = mediaPath(mediaDir, media.sha256)
      const size = await stat(path).then(
        (s) => (s.isFile() ? s.size : undefined),
        () => undefined,
      )
      if (size === undefined) {
        services.logger.warn({ requestId, sha256: media.sha256 }, 'stored media file is missing')
        throw new ApiError('NOT_FOUND', 'No stored media for this url.')
      }

      const etag = `"${media.sha256}"`
      const headers: Record<string, string> = {
        ...common,
        'Content-Type': media.mediaType,
        ...shared,
        ETag: etag,
        'Accept-Ranges': 'bytes',
      }
      if (etagMatches(req.headers['if-none-match'], etag)) {
        delete headers['Content-Type']
        res.writeHead(304, headers)
        res.end()
        return
      }
      const ifRange = req.headers['if-range']
      const range =
        ifRange === undefined || ifRange === etag ? parseRange(req.headers.range, size) : undefined
      if (range === 'unsatisfiable') {
        throw new ApiError(
          'RANGE_NOT_SATISFIABLE',
          `The range cannot be satisfied: the media has ${size} bytes.`,
          {
            headers: { 'Content-Range': `bytes */${size}`, 'Accept-Ranges': 'bytes' },
          },
        )
      }
      const start = range?.start ?? 0
      const end = range?.end ?? size - 1
      headers['Content-Length'] = String(size === 0 ? 0 : end - start + 1)
      if (range) headers['Content-Range'] = `bytes ${start}-${end}/${size}`
      res.writeHead(range ? 206 : 200, headers)
      if (head || size === 0) {
        res.end()
        return
      }
      await pipeline(createReadStream(path, { start, end }), res)
    } catch (err) {
      if (res.headersSent) {
        // The body was under way (client gone, file vanished): nothing left to tell.
        res.destroy()
        return
      }
      const error = toApiError(err)
      if (error.status >= 500) {
        services.logger.error(
          { requestId, path: MEDIA_PATH, code: error.code, err: error.cause ?? error },
          'media failed',
        )
      }
      const body = errorBody(error, requestId)
      res.writeHead(error.status, {
        ...common,
        ...error.headers,
        'Content-Type': 'application/json; charset=utf-8',
        'Cache-Control': 'no-store',
        'Content-Length': String(Buffer.byteLength(body)),
      })
      res.end(head ? undefined : body)
    } finally {
      access?.workFinished()
    }
  }
}

/** `url`, and `width` for a thumbnail; any other parameter is refused like on every /v1 endpoint. */
function mediaParams(rawUrl: string): { url: string; width: number | undefined } {
  const params = queryInput(new URL(rawUrl, 'http://localhost').search.slice(1))
  const unknown = Object.keys(params).filter((k) => k !== 'url' && k !== 'width')
  if (unknown.length > 0) throw new ApiError('INVALID_ARGUMENT', unknownParametersMessage(unknown))
  const url = params.url
  if (Array.isArray(url)) throw new ApiError('INVALID_ARGUMENT', 'url: must be given once')
  if (!url) throw new ApiError('INVALID_ARGUMENT', 'url: required')
  // Never a stored location (PostgreSQL text cannot hold NUL).
  if (url.includes('\u0000')) throw new ApiError('NOT_FOUND', 'No stored media for this url.')
  if (url.length > MAX_MEDIA_URL_LENGTH) {
    throw new ApiError('INVALID_ARGUMENT', `url: must be at most ${MAX_MEDIA_URL_LENGTH} characters`)
  }
  return { url, width: widthParam(params.width) }
}

function widthParam(value: string | string[] | undefined): number | undefined {
  if (value === undefined) return undefined
  const width = THUMBNAIL_WIDTHS.find((w) => String(w) === value)
  if (width === undefined) {
    throw new ApiError('INVALID_ARGUMENT', `width: must be one of ${THUMBNAIL_WIDTHS.join(', ')}`)
  }
  return width
}
