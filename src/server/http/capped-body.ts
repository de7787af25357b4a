/**
 * A request body read up to a cap, for the endpoints whose framework reads
 * any body whole (tRPC, next-auth): past the cap the read stops and the
 * request is refused with 413 in the specification's envelope, whatever
 * Content-Length says or whether it is sent at all (docs/portal.md, "Limits").
 */
import { ApiError } from '@/server/errors/api-error'

/** The body, read up to `max` bytes; past that the read stops and ApiError PAYLOAD_TOO_LARGE is thrown. */
export async function readCappedBody(
  req: Request,
  max: number,
): Promise<Uint8Array<ArrayBuffer> | undefined> {
  const tooLarge = () => new ApiError('PAYLOAD_TOO_LARGE', `The request body is larger than ${max} bytes.`)
  if (Number(req.headers.get('content-length') ?? 0) > max) throw tooLarge()
  if (!req.body) return undefined
  const reader = req.body.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > max) {
      await reader.cancel().catch(() => {})
      throw tooLarge()
    }
    chunks.push(value)
  }
  const body = new Uint8Array(size)
  let at = 0
  for (const chunk of chunks) {
    body.set(chunk, at)
    at += chunk.byteLength
  }
  return body
}
