/**
 * A request body of 200 MiB in 16 KiB chunks with no Content-Length, made as
 * it is read: `pulled()` tells how much a body cap let the server read.
 */
export const ENDLESS_CHUNK_BYTES = 16 * 1024

export function endlessBody(byte: number): { stream: ReadableStream<Uint8Array>; pulled: () => number } {
  let pulled = 0
  const chunk = new Uint8Array(ENDLESS_CHUNK_BYTES).fill(byte)
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      pulled += chunk.byteLength
      if (pulled > 200 * 1024 * 1024) controller.close()
      else controller.enqueue(chunk)
    },
  })
  return { stream, pulled: () => pulled }
}
