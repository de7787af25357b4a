/**
 * A stand-in for http.ServerResponse that trpc-to-openapi writes into, so the
 * REST layer can rewrite the result before it reaches the socket: errors into
 * the API envelope, successes with ETag/304 and compression. It forwards the
 * real response's 'close' so a client that disconnects still aborts the
 * procedure (the request signal) and frees its concurrency slot.
 */
import { EventEmitter } from 'node:events'
import type { ServerResponse } from 'node:http'

export class BufferedResponse extends EventEmitter {
  statusCode = 200
  readonly headers = new Map<string, string | string[]>()
  body = ''
  private ended = false
  readonly done: Promise<void>
  private resolveDone!: () => void

  constructor(private readonly real: ServerResponse) {
    super()
    this.done = new Promise((resolve) => {
      this.resolveDone = resolve
    })
    real.once('close', () => this.emit('close'))
  }

  get writableEnded(): boolean {
    return this.ended || this.real.writableEnded
  }

  get headersSent(): boolean {
    return this.ended
  }

  setHeader(name: string, value: string | number | readonly string[]): this {
    this.headers.set(name.toLowerCase(), Array.isArray(value) ? [...value] : String(value))
    return this
  }

  getHeader(name: string): string | string[] | undefined {
    return this.headers.get(name.toLowerCase())
  }

  removeHeader(name: string): void {
    this.headers.delete(name.toLowerCase())
  }

  write(chunk: string | Uint8Array): boolean {
    this.body += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8')
    return true
  }

  end(chunk?: string | Uint8Array): this {
    if (this.ended) return this
    if (chunk !== undefined) this.write(chunk)
    this.ended = true
    this.emit('finish')
    this.resolveDone()
    return this
  }
}
