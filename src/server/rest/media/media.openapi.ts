/**
 * /v1/media in the OpenAPI document. The path is served by plain node:http
 * (media.handler.ts), not by a tRPC procedure, so it is described by hand;
 * openapi.ts adds it to the generated document.
 */
import { MAX_MEDIA_URL_LENGTH, THUMBNAIL_WIDTHS } from '@/db/media-path'
import { MEDIA_CACHE_CONTROL, MEDIA_CSP } from './media.handler'

const envelope = { $ref: '#/components/schemas/ErrorEnvelope' }
const requestId = { description: 'Unique id of this request.', schema: { type: 'string' } }

const error = (description: string, headers: Record<string, unknown> = {}) => ({
  description,
  headers: { 'X-Request-Id': requestId, ...headers },
  content: { 'application/json': { schema: envelope } },
})

const bytesHeaders = {
  'X-Request-Id': requestId,
  'Content-Type': { description: 'Media type sniffed from the stored bytes.', schema: { type: 'string' } },
  ETag: {
    description: 'Strong validator: the SHA-256 (hex) of the whole stored bytes, quoted.',
    schema: { type: 'string', pattern: '^"[0-9a-f]{64}"$' },
  },
  'Cache-Control': { schema: { type: 'string', const: MEDIA_CACHE_CONTROL } },
  'Content-Security-Policy': { schema: { type: 'string', const: MEDIA_CSP } },
  'X-Content-Type-Options': { schema: { type: 'string', const: 'nosniff' } },
  'Accept-Ranges': { schema: { type: 'string', const: 'bytes' } },
  'Content-Length': { schema: { type: 'integer' } },
}

export const mediaPathItem = {
  get: {
    operationId: 'media-get',
    tags: ['Media'],
    summary: "The service's stored copy of an NFT's media",
    description:
      "Serves the original media bytes the indexer already stored for `url` (an NFT's `image_url`, exactly as the metadata declares it). NFT responses carry it as `media_url`. No credential: `<img>` and `<video>` tags cannot send one. The path never fetches anything: a location whose bytes are not stored is a 404. Limited per client IP. HEAD answers the same headers without a body. Byte ranges (one per request) are served for video players: `Range: bytes=0-1023` gives 206 with `Content-Range`; a range beyond the bytes gives 416. The bytes never change for a given ETag, so responses are cacheable for a year; `If-None-Match` gives 304. With `width` (64, 256 or 512), a thumbnail of a stored image instead (PNG for an SVG, rendered at that width; WebP otherwise, never wider than the image; the first frame of an animation), made on the first request and cached; same headers, its ETag the SHA-256 of the thumbnail, no ranges. Media that is no image (video, audio, HTML, models) has no thumbnail (404), nor has an image that is too large (over 40 megapixels) or undecodable; while too many thumbnails are being made, 503 with `Retry-After`.",
    security: [],
    parameters: [
      {
        in: 'query',
        name: 'url',
        required: true,
        description: "The original media location (URL-encoded), as in the NFT's `image_url`.",
        schema: { type: 'string', minLength: 1, maxLength: MAX_MEDIA_URL_LENGTH },
        example: 'ipfs://bafybeigdyrzt5sfp7udm7hu76uh7y26nf3efuylqabf3oclgtqy55fbzdi/17.png',
      },
      {
        in: 'query',
        name: 'width',
        required: false,
        description:
          'A thumbnail of the stored image at this width in pixels (never wider than the image) instead of the original bytes. NFT responses with `include_metadata=true` list them as `thumbnails`.',
        schema: { type: 'integer', enum: [...THUMBNAIL_WIDTHS] },
        example: 256,
      },
      {
        in: 'header',
        name: 'Range',
        required: false,
        description: 'One byte range, e.g. `bytes=0-1023`, `bytes=1024-` or `bytes=-500`.',
        schema: { type: 'string' },
      },
    ],
    responses: {
      '200': {
        description: 'The whole stored bytes, or with `width` the thumbnail (image/png or image/webp).',
        headers: bytesHeaders,
        content: { '*/*': { schema: { type: 'string', contentMediaType: 'application/octet-stream' } } },
      },
      '206': {
        description: 'The requested byte range.',
        headers: {
          ...bytesHeaders,
          'Content-Range': { schema: { type: 'string', pattern: '^bytes [0-9]+-[0-9]+/[0-9]+$' } },
        },
        content: { '*/*': { schema: { type: 'string', contentMediaType: 'application/octet-stream' } } },
      },
      '304': {
        description: 'Not modified (If-None-Match matched the ETag).',
        headers: { ETag: bytesHeaders.ETag },
      },
      '400': error(
        'Missing, repeated or too long `url`, a `width` other than 64, 256 or 512, or an unknown parameter (INVALID_ARGUMENT).',
      ),
      '404': error(
        'No bytes are stored for this location, or (with `width`) no thumbnail can be made of them: not an image, too many pixels, undecodable (NOT_FOUND).',
      ),
      '405': error('Only GET and HEAD (METHOD_NOT_ALLOWED).'),
      '416': error('The range lies beyond the stored bytes (RANGE_NOT_SATISFIABLE).', {
        'Content-Range': { schema: { type: 'string', pattern: '^bytes \\*/[0-9]+$' } },
      }),
      '429': error('The per-IP rate limit is exceeded (RATE_LIMITED); retry after `Retry-After` seconds.'),
      '503': error(
        'A dependency is unavailable (SERVICE_UNAVAILABLE or RATE_LIMITER_UNAVAILABLE), or (with `width`) too many thumbnails are being made (SERVICE_UNAVAILABLE, with `Retry-After`).',
        { 'Retry-After': { description: 'Seconds to wait.', schema: { type: 'integer' } } },
      ),
    },
  },
}
