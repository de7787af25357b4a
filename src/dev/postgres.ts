/**
 * Embedded PostgreSQL for the no-DATABASE_URL default (docs/design.md, "Embedded defaults and real services"): PGlite
 * (PostgreSQL compiled to WASM) with its data in a directory, served over the
 * Postgres wire protocol so every process talks to it through `pg` exactly as
 * it would to a real server.
 *
 * PGlite is a single backend with one session. pglite-socket's own server
 * queues each connection's messages onto it, but (as of 0.2.17) lets the
 * session leak between connections: a `SET search_path` or the startup
 * `options` of one connection is seen by all, and another connection's
 * message can land between Parse and Sync of an extended-protocol query.
 * So connections are served here by pglite-socket's protocol handler with our
 * own queue, SessionQueue, which:
 *  - runs one connection at a time until it is idle again: to Sync for the
 *    extended protocol, to COMMIT/ROLLBACK inside a transaction;
 *  - gives every connection its own settings: startup parameters and
 *    `options` (`-c search_path=…`) are applied, and the session-level
 *    settings of a connection are saved and restored when another takes over.
 *  - gives every connection its own named prepared statements: the names of
 *    Parse, Bind, Describe and Close are prefixed with the connection's id,
 *    and a connection's statements are deallocated when it goes away.
 * Still shared (one backend): advisory locks, LISTEN/NOTIFY, temporary
 * tables, and statements named in SQL (PREPARE, DEALLOCATE, DISCARD ALL).
 * COPY … FROM STDIN cannot work over PGlite's
 * wire protocol (it kills the backend), so it is refused with an error.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, type Server, type Socket } from 'node:net'
import path from 'node:path'
import { PGlite } from '@electric-sql/pglite'
import { btree_gin } from '@electric-sql/pglite/contrib/btree_gin'
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm'
import { PGLiteSocketHandler, type PGLiteSocketHandlerOptions } from '@electric-sql/pglite-socket'
import { parseOptions, quoteIdentifier } from '@/db/connection-url'
import { restoreSessionSettings, type SessionSettings, sessionSettings } from '@/db/queries/server-settings'
import { folderLockHolder, lockFolder } from './folder-lock'

export interface EmbeddedPostgres {
  /** postgres://postgres@<host>:<port>/postgres */
  url: string
  stop(): Promise<void>
}

export interface EmbeddedPostgresOptions {
  /** Where PGlite keeps its files; created when missing, reused on the next start. */
  dataDir: string
  /** 0 or undefined: a free port. */
  port?: number
  /** Default 127.0.0.1 (never reachable from other machines unless asked). */
  host?: string
  /** Open connections allowed at once; default 32 (the web process's two pools, the indexer's and tools'). */
  maxConnections?: number
}

export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<EmbeddedPostgres> {
  mkdirSync(options.dataDir, { recursive: true })
  const releaseDataDir = lockDataDir(options.dataDir)
  let db: PGlite
  try {
    // The extensions the migrations create (pg_trgm: collection search; btree_gin: trait filters).
    db = await PGlite.create({ dataDir: options.dataDir, extensions: { pg_trgm, btree_gin } })
  } catch (err) {
    releaseDataDir()
    throw err
  }
  const queue = await SessionQueue.create(db)
  const maxConnections = options.maxConnections ?? 32
  const handlers = new Set<PGLiteSocketHandler>()
  const sockets = new Set<Socket>()

  const server = createServer((socket) => {
    sockets.add(socket)
    socket.once('close', () => sockets.delete(socket))
    if (handlers.size >= maxConnections) {
      // A real ErrorResponse (SQLSTATE 53300), so clients report "too many clients";
      // then closed from this side too, as a client may never close after a failed connect.
      socket.end(errorResponse('53300', 'sorry, too many clients already'), () => socket.destroy())
      return
    }
    const handler = new PGLiteSocketHandler({
      queryQueue: queue as unknown as PGLiteSocketHandlerOptions['queryQueue'],
      closeOnDetach: true,
    })
    handlers.add(handler)
    const forget = () => handlers.delete(handler)
    handler.addEventListener('close', forget)
    handler.addEventListener('error', forget)
    handler.attach(socket).catch(() => {
      forget()
      socket.destroy()
    })
  })

  const host = options.host ?? '127.0.0.1'
  let port: number
  try {
    port = await listen(server, options.port ?? 0, host)
  } catch (err) {
    await db.close()
    releaseDataDir()
    throw err
  }
  const urlHost = host.includes(':') ? `[${host}]` : host
  const url = `postgres://postgres@${urlHost}:${port}/postgres`
  // For tools run while this server holds the directory (runningEmbeddedPostgres).
  const urlFile = path.join(options.dataDir, URL_FILE)
  writeFileSync(urlFile, url)

  let stopped: Promise<void> | undefined
  return {
    url,
    stop() {
      stopped ??= (async () => {
        rmSync(urlFile, { force: true })
        const closed = new Promise<void>((resolve) => server.close(() => resolve()))
        await Promise.all([...handlers].map((handler) => handler.detach(true)))
        handlers.clear()
        for (const socket of sockets) socket.destroy()
        await closed
        await queue.idle()
        await db.close()
        releaseDataDir()
      })()
      return stopped
    },
  }
}

const PID_FILE = 'embedded-postgres.pid'
const URL_FILE = 'embedded-postgres.url'

/**
 * The URL of the embedded server that another live process (a running `npm
 * start`) serves from `dataDir`, or undefined when there is none: a tool
 * (`npm run db:migrate`, `import:transfers`) connects to it rather than
 * opening the files a second time. A pid file left by a server that is gone
 * (its pid now dead or another process's, src/dev/folder-lock.ts) names none.
 */
export function runningEmbeddedPostgres(dataDir: string): string | undefined {
  const holder = folderLockHolder(dataDir, PID_FILE)
  if (holder === undefined || holder === process.pid) return undefined
  try {
    return readFileSync(path.join(dataDir, URL_FILE), 'utf8').trim() || undefined
  } catch {
    return undefined // no URL file: nobody serves this directory
  }
}

/**
 * PGlite does not lock its files, and two instances on one directory corrupt
 * it: a pid file keeps a second server (a second `npm start`) out. A file
 * left by a process that no longer runs, or whose pid another process now has,
 * is taken over (src/dev/folder-lock.ts).
 */
function lockDataDir(dataDir: string): () => void {
  return lockFolder(dataDir, PID_FILE, 'embedded PostgreSQL')
}

function listen(server: Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => {
      server.off('error', reject)
      const address = server.address()
      if (address === null || typeof address === 'string')
        reject(new Error('embedded postgres: no TCP address'))
      else resolve(address.port)
    })
  })
}

// ───────────────────────── wire protocol bits ─────────────────────────

const PROTOCOL_V3 = 196608
const TERMINATE = 0x58 // 'X'
const SYNC = 0x53 // 'S'
const SIMPLE_QUERY = 0x51 // 'Q'
const PARSE = 0x50 // 'P'
const BIND = 0x42 // 'B'
const DESCRIBE = 0x44 // 'D'
const CLOSE = 0x43 // 'C'
const STATEMENT = 0x53 // 'S', in Describe and Close: a prepared statement (else 'P', a portal)
/** Extended-protocol messages: the connection keeps the backend until its Sync. */
const EXTENDED = new Set([0x50, 0x42, 0x44, 0x45, 0x43, 0x48]) // Parse Bind Describe Execute Close Flush

function isStartupMessage(message: Uint8Array): boolean {
  return (
    message.length >= 8 && Buffer.from(message.buffer, message.byteOffset, 8).readInt32BE(4) === PROTOCOL_V3
  )
}

/** The settings a startup packet asks for: its parameters, `options` expanded. */
function startupSettings(message: Uint8Array): Record<string, string> {
  const parts = Buffer.from(message.buffer, message.byteOffset, message.length)
    .subarray(8)
    .toString('utf8')
    .split('\0')
  const settings: Record<string, string> = {}
  for (let i = 0; i + 1 < parts.length; i += 2) {
    const name = parts[i] ?? ''
    const value = parts[i + 1] ?? ''
    if (name === '') break
    if (name === 'options') Object.assign(settings, Object.fromEntries(parseOptions(value)))
    else if (!['user', 'database', 'replication'].includes(name)) settings[name] = value
  }
  return settings
}

const COPY_FROM_STDIN = /\bcopy\b[\s\S]*\bfrom\s+stdin\b/i
const COPY_REFUSAL =
  "DO $$BEGIN RAISE EXCEPTION 'COPY FROM STDIN is not supported by the embedded database (PGlite); use INSERT' " +
  "USING ERRCODE = 'feature_not_supported'; END$$"

/**
 * PGlite's single backend cannot take COPY data over the wire: the backend
 * dies and every connection hangs. Such a statement is replaced by one that
 * fails cleanly (and aborts the transaction, as a failed statement does).
 */
function copyInRefused(message: Uint8Array): Uint8Array | undefined {
  const type = message[0]
  if (type !== SIMPLE_QUERY && type !== PARSE) return undefined
  const body = Buffer.from(message.buffer, message.byteOffset, message.length)
  if (!COPY_FROM_STDIN.test(body.toString('utf8'))) return undefined
  if (type === SIMPLE_QUERY) return frame(SIMPLE_QUERY, Buffer.from(`${COPY_REFUSAL}\0`, 'utf8'))
  // Parse: statement name, query, parameter types; keep the name, swap the query, no parameters.
  const nameEnd = body.indexOf(0, 5)
  return frame(
    PARSE,
    Buffer.concat([body.subarray(5, nameEnd + 1), Buffer.from(`${COPY_REFUSAL}\0`, 'utf8'), Buffer.alloc(2)]),
  )
}

/** Where an extended-protocol message names a prepared statement: the name's start in the message. */
function statementNameStart(message: Buffer): number | undefined {
  switch (message[0]) {
    case PARSE:
      return 5
    case BIND:
      // After the portal's name.
      return message.indexOf(0, 5) + 1
    case DESCRIBE:
    case CLOSE:
      return message[5] === STATEMENT ? 6 : undefined
    default:
      return undefined
  }
}

/**
 * The message with its prepared statement's name made the connection's own
 * (`c<connection>_<name>`), and that name; the unnamed statement (an empty
 * name) is left as it is: each connection's Parse replaces it anyway.
 */
function ownStatementName(handlerId: number, message: Uint8Array): { message: Uint8Array; name?: string } {
  const body = Buffer.from(message.buffer, message.byteOffset, message.length)
  const start = statementNameStart(body)
  if (start === undefined || body[start] === 0) return { message }
  const end = body.indexOf(0, start)
  const name = `c${handlerId}_${body.toString('utf8', start, end)}`
  const payload = Buffer.concat([body.subarray(5, start), Buffer.from(name, 'utf8'), body.subarray(end)])
  return { message: frame(body[0]!, payload), name }
}

function frame(type: number, payload: Buffer): Uint8Array {
  const header = Buffer.alloc(5)
  header[0] = type
  header.writeInt32BE(payload.length + 4, 1)
  return Buffer.concat([header, payload])
}

function errorResponse(code: string, message: string): Buffer {
  const fields = Buffer.from(`SFATAL\0VFATAL\0C${code}\0M${message}\0\0`, 'utf8')
  const header = Buffer.alloc(5)
  header.write('E', 0)
  header.writeInt32BE(fields.length + 4, 1)
  return Buffer.concat([header, fields])
}

// ───────────────────────── the queue ─────────────────────────

interface MessageJob {
  kind: 'message'
  handlerId: number
  message: Uint8Array
  onData: (data: Uint8Array) => void
  resolve: (bytes: number) => void
  reject: (err: unknown) => void
}

interface DisconnectJob {
  kind: 'disconnect'
  handlerId: number
  resolve: () => void
}

type Job = MessageJob | DisconnectJob
type Settings = SessionSettings

/**
 * Stands in for pglite-socket's QueryQueueManager (same four methods, which
 * PGLiteSocketHandler calls) and makes each connection a session of its own.
 */
class SessionQueue {
  private readonly jobs: Job[] = []
  /** Session-level settings of each connection while it is not the live one. */
  private readonly sessions = new Map<number, Settings>()
  /** Connections inside an extended-protocol batch (Parse … Sync). */
  private readonly openBatches = new Set<number>()
  /** Each connection's named prepared statements (as PGlite knows them), deallocated when it goes away. */
  private readonly statements = new Map<number, Set<string>>()
  /** Statements of connections gone while another held the backend: deallocated once it is free. */
  private orphaned: string[] = []
  /** Connections whose SQL may have changed a setting since their settings were saved. */
  private readonly dirty = new Set<number>()
  /** The connection whose settings the backend holds now. */
  private live: number | null = null
  /** The connection the backend is reserved for (open transaction or batch). */
  private owner: number | null = null
  private draining: Promise<void> | null = null

  private constructor(
    private readonly db: PGlite,
    /** Session settings PGlite itself starts with; every connection starts from these. */
    private readonly baseline: Settings,
  ) {}

  static async create(db: PGlite): Promise<SessionQueue> {
    return new SessionQueue(db, await sessionSettings(db))
  }

  enqueue(handlerId: number, message: Uint8Array, onData: (data: Uint8Array) => void): Promise<number> {
    return new Promise((resolve, reject) => {
      this.jobs.push({ kind: 'message', handlerId, message, onData, resolve, reject })
      this.drain()
    })
  }

  getQueueLength(): number {
    return this.jobs.length
  }

  clearQueueForHandler(handlerId: number): void {
    for (let i = this.jobs.length - 1; i >= 0; i--) {
      const job = this.jobs[i]
      if (job?.kind === 'message' && job.handlerId === handlerId) {
        this.jobs.splice(i, 1)
        job.reject(new Error('connection closed'))
      }
    }
  }

  /** Called when a connection goes away: ends what it left open, forgets its session. */
  clearTransactionIfNeeded(handlerId: number): Promise<void> {
    return new Promise((resolve) => {
      this.jobs.push({ kind: 'disconnect', handlerId, resolve })
      this.drain()
    })
  }

  /** Resolves once nothing is queued or running. */
  async idle(): Promise<void> {
    while (this.draining) await this.draining
  }

  private drain(): void {
    if (this.draining) return
    this.draining = (async () => {
      for (let job = this.next(); job; job = this.next()) {
        if (job.kind === 'disconnect') {
          await this.disconnect(job.handlerId).catch(() => {})
          job.resolve()
          continue
        }
        try {
          job.resolve(await this.run(job))
        } catch (err) {
          job.reject(err)
        }
      }
    })().finally(() => {
      this.draining = null
      // A job enqueued while the loop was finishing found it still running.
      if (this.nextIndex() >= 0) this.drain()
    })
  }

  private next(): Job | undefined {
    const index = this.nextIndex()
    return index >= 0 ? this.jobs.splice(index, 1)[0] : undefined
  }

  /** Disconnects first; then the owner's messages only; else first come, first served. */
  private nextIndex(): number {
    const disconnect = this.jobs.findIndex((job) => job.kind === 'disconnect')
    if (disconnect >= 0) return disconnect
    if (this.owner === null) return this.jobs.length > 0 ? 0 : -1
    return this.jobs.findIndex((job) => job.handlerId === this.owner)
  }

  /**
   * Deallocates the statements of connections that are gone, unless another connection holds
   * the backend (a transaction, or a batch a simple query would cut: it drops the unnamed
   * statement and portal).
   */
  private async deallocateOrphaned(): Promise<void> {
    if (this.owner !== null || this.orphaned.length === 0) return
    const names = this.orphaned
    this.orphaned = []
    for (const name of names) {
      // A Parse that failed left no statement of that name.
      await this.db.exec(`DEALLOCATE ${quoteIdentifier(name)}`).catch(() => {})
    }
  }

  private async run(job: MessageJob): Promise<number> {
    const { handlerId, message } = job
    await this.deallocateOrphaned()
    const type = message[0]
    if (isStartupMessage(message)) {
      this.sessions.set(handlerId, { ...this.baseline, ...startupSettings(message) })
    } else if (type === TERMINATE) {
      // Not forwarded: to PGlite it would end the one session all connections share.
      await this.disconnect(handlerId)
      return 0
    } else if (this.live !== handlerId) {
      await this.switchTo(handlerId)
    }
    if ((type === SIMPLE_QUERY || type === PARSE) && mayChangeSettings(message)) this.dirty.add(handlerId)

    const own = ownStatementName(handlerId, message)
    if (own.name !== undefined) {
      const names = this.statements.get(handlerId) ?? new Set()
      this.statements.set(handlerId, names)
      if (type === PARSE) names.add(own.name)
      else if (type === CLOSE) names.delete(own.name)
    }
    const forwarded = copyInRefused(own.message) ?? own.message
    let bytes = 0
    await this.db.runExclusive(() =>
      this.db.execProtocolRawStream(forwarded, {
        onRawData: (chunk) => {
          bytes += chunk.length
          job.onData(chunk)
        },
      }),
    )

    if (type !== undefined && EXTENDED.has(type)) this.openBatches.add(handlerId)
    if (type === SYNC || type === SIMPLE_QUERY) this.openBatches.delete(handlerId)
    this.owner = this.openBatches.has(handlerId) || this.db.isInTransaction() ? handlerId : null
    return bytes
  }

  /** Saves the live connection's settings and installs `handlerId`'s; both only when needed. */
  private async switchTo(handlerId: number): Promise<void> {
    const previous = this.live
    if (previous !== null && this.dirty.has(previous) && this.sessions.has(previous)) {
      this.sessions.set(previous, await sessionSettings(this.db))
      this.dirty.delete(previous)
    }
    const settings = this.sessions.get(handlerId) ?? this.baseline
    const current = previous === null ? undefined : this.sessions.get(previous)
    if (current !== undefined && sameSettings(current, settings)) {
      this.live = handlerId
      return
    }
    await restoreSessionSettings(this.db, settings)
    this.live = handlerId
  }

  private async disconnect(handlerId: number): Promise<void> {
    if (this.owner === handlerId) {
      if (this.openBatches.has(handlerId)) {
        await this.db.runExclusive(() =>
          this.db.execProtocolRawStream(new Uint8Array([SYNC, 0, 0, 0, 4]), { onRawData: () => {} }),
        )
      }
      if (this.db.isInTransaction()) await this.db.exec('ROLLBACK')
      this.owner = null
    }
    this.orphaned.push(...(this.statements.get(handlerId) ?? []))
    this.statements.delete(handlerId)
    await this.deallocateOrphaned()
    this.openBatches.delete(handlerId)
    this.sessions.delete(handlerId)
    this.dirty.delete(handlerId)
  }
}

/**
 * Session settings change only through SET, RESET, set_config() or DISCARD;
 * statements without those words need no save. A false alarm (OFFSET) only
 * costs one query.
 */
function mayChangeSettings(message: Uint8Array): boolean {
  return /set|discard/i.test(
    Buffer.from(message.buffer, message.byteOffset, message.length).toString('latin1'),
  )
}

function sameSettings(a: Settings, b: Settings): boolean {
  const keys = Object.keys(a)
  return keys.length === Object.keys(b).length && keys.every((key) => a[key] === b[key])
}
