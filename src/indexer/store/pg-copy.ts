/**
 * COPY … FROM STDIN in text format, the bulk path for rows believed new
 * (sync commits, imports). PostgreSQL takes COPY rows for about a quarter
 * less CPU than the same rows inserted from unnest'ed array parameters
 * (docs/indexer.md, "Derived state (definitions)"): no set-returning function to
 * materialise, no INSERT … SELECT plan per statement.
 *
 * The embedded database (PGlite, src/dev/postgres.ts) refuses COPY FROM
 * STDIN; on such a server the caller's INSERT runs instead (copyOrInsert).
 */
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import type pg from 'pg'
import { from as copyFrom } from 'pg-copy-streams'
import { unlessFailsWith } from './db'

/** Bytes per COPY data message: bounds the memory of one message. */
const CHUNK_BYTES = 1024 * 1024

/**
 * Streams `lines` (each ending in a newline, fields escaped with copyText) into `sql`, a COPY … FROM STDIN.
 * Lines are encoded straight into buffers: joining them into one string first, which the
 * socket then encodes again, took twice the CPU (docs/indexer.md, "Derived state (definitions)").
 */
export async function copyRows(client: pg.PoolClient, sql: string, lines: Iterable<string>): Promise<void> {
  const chunks = (function* () {
    let chunk = Buffer.allocUnsafe(CHUNK_BYTES)
    let used = 0
    for (const line of lines) {
      // UTF-8 takes at most 3 bytes per UTF-16 code unit.
      const most = line.length * 3
      if (used + most > chunk.length) {
        if (used > 0) yield chunk.subarray(0, used)
        chunk = Buffer.allocUnsafe(Math.max(CHUNK_BYTES, most))
        used = 0
      }
      used += chunk.write(line, used, 'utf8')
    }
    if (used > 0) yield chunk.subarray(0, used)
  })()
  // In byte mode the stream makes at most one chunk ahead of the socket (16 KiB high-water mark).
  await pipeline(Readable.from(chunks, { objectMode: false }), client.query(copyFrom(sql)))
}

const SPECIAL = /[\\\t\n\r]/
const SPECIALS = /[\\\t\n\r]/g
const ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' }

/**
 * A text field of a COPY line: null as \N, the format's four special characters escaped.
 * Tested before replacing: the ingest path's hex fields never need it, and a test is
 * half the cost of a replace that finds nothing.
 */
export function copyText(value: string | null): string {
  if (value === null) return '\\N'
  return SPECIAL.test(value) ? value.replace(SPECIALS, (c) => ESCAPES[c]!) : value
}

/** A timestamptz field from Unix seconds. */
export const copyTimestamp = (unixSeconds: bigint) => new Date(Number(unixSeconds) * 1000).toISOString()

export const copyBool = (value: boolean) => (value ? 't' : 'f')

/** A number field, null as \N. */
export const copyNumber = (value: bigint | number | null) => (value === null ? '\\N' : String(value))

const FEATURE_NOT_SUPPORTED = '0A000'
/** Whether a server (host:port/database) takes COPY FROM STDIN, once its first COPY has told. */
const takesCopy = new Map<string, boolean>()

/**
 * Runs `copy`, or `insert` where the server refuses COPY FROM STDIN. The
 * first COPY on a server runs under a savepoint, so that a refusal leaves
 * the caller's transaction usable; the answer is remembered per server.
 */
export async function copyOrInsert(
  client: pg.PoolClient,
  copy: () => Promise<void>,
  insert: () => Promise<void>,
): Promise<void> {
  const server = `${client.host}:${client.port}/${client.database}`
  const known = takesCopy.get(server)
  if (known !== undefined) return known ? copy() : insert()
  const copied = await unlessFailsWith(client, FEATURE_NOT_SUPPORTED, copy)
  takesCopy.set(server, copied)
  if (!copied) return insert()
}
