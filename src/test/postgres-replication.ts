/**
 * A private PostgreSQL primary with one streaming replica, for one test file:
 *
 *   const pg = await startReplicatedPostgres()
 *   … pg.primary.url / pg.replica.url, pg.replica.pool …
 *   await pg.remove()
 *
 * Two fresh clusters (initdb, then pg_basebackup -R of the primary: real WAL
 * streaming) in a temporary directory, on free ports — never the machine's
 * own server. The server binaries come from /usr/lib/postgresql/<version>/bin
 * (or `pg_config --bindir`); PostgreSQL refuses to run as root, so a root test
 * runs them as the `postgres` OS user. A worker that exits without remove()
 * still stops both servers and deletes their files.
 */
import { execFile, execFileSync } from 'node:child_process'
import {
  appendFileSync,
  chownSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
} from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import type pg from 'pg'
import { createPool } from '@/db/client'
import { parseLsn } from '@/db/replica-lag'
import { freePort } from './free-port'

const run = promisify(execFile)

export interface TestCluster {
  url: string
  port: number
  /** A small pool on the cluster, for the test's own queries. */
  pool: pg.Pool
  /** pg_ctl stop: `immediate` is as abrupt as a crash (no shutdown checkpoint, connections cut). */
  stop(mode?: 'fast' | 'immediate'): Promise<void>
  /** Starts it again on its data (a replica resumes streaming from where it stopped). */
  start(): Promise<void>
}

export interface ReplicatedPostgres {
  primary: TestCluster
  replica: TestCluster
  /** Resolves once the replica has replayed everything the primary had flushed when called. */
  waitForReplay(timeoutMs?: number): Promise<void>
  /** Stops both servers and deletes their files. */
  remove(): Promise<void>
}

/** The newest PostgreSQL (15+) server binaries on this machine. */
function serverBinDir(): string {
  const root = '/usr/lib/postgresql'
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter((v) => /^\d+$/.test(v) && Number(v) >= 15)
        .sort((a, b) => Number(b) - Number(a))
    : []
  for (const version of versions) {
    const dir = path.join(root, version, 'bin')
    if (existsSync(path.join(dir, 'pg_basebackup'))) return dir
  }
  try {
    const dir = execFileSync('pg_config', ['--bindir'], { encoding: 'utf8' }).trim()
    if (existsSync(path.join(dir, 'initdb'))) return dir
  } catch {
    // No pg_config either.
  }
  throw new Error('PostgreSQL 15+ server binaries (initdb, pg_ctl, pg_basebackup) are not installed')
}

/** Root runs the server binaries as `postgres` (PostgreSQL will not run as root). */
const asRoot = process.getuid?.() === 0

function postgresIds(): { uid: number; gid: number } {
  const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim())
  return { uid: id('-u'), gid: id('-g') }
}

export async function startReplicatedPostgres(): Promise<ReplicatedPostgres> {
  const bin = serverBinDir()
  const dir = mkdtempSync(path.join(os.tmpdir(), 'nft-pg-replication-'))
  if (asRoot) {
    const { uid, gid } = postgresIds()
    chownSync(dir, uid, gid)
  }
  const tool = (name: string, args: string[]) =>
    asRoot
      ? run('runuser', ['-u', 'postgres', '--', path.join(bin, name), ...args], { timeout: 120_000 })
      : run(path.join(bin, name), args, { timeout: 120_000 })
  const dataDirs: string[] = []
  const pools: pg.Pool[] = []

  // A worker that dies without remove(): SIGQUIT is PostgreSQL's immediate shutdown.
  const onExit = () => {
    for (const dataDir of dataDirs) {
      try {
        const pid = Number(readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0])
        if (pid > 0) process.kill(pid, 'SIGQUIT')
      } catch {
        // Not running.
      }
    }
    rmSync(dir, { recursive: true, force: true })
  }
  process.once('exit', onExit)

  const started: TestCluster[] = []
  const cluster = async (name: string, port: number): Promise<TestCluster> => {
    const dataDir = path.join(dir, name)
    const logFile = path.join(dir, `${name}.log`)
    const start = async () => {
      await tool('pg_ctl', ['-D', dataDir, '-l', logFile, '-w', '-t', '60', 'start']).catch((err: Error) => {
        // pg_ctl only says "could not start server": the reason is in the server's own log.
        const log = existsSync(logFile)
          ? readFileSync(logFile, 'utf8').trim().split('\n').slice(-8).join('\n')
          : ''
        throw new Error(`${err.message.trim()}\n${name}.log:\n${log}`)
      })
    }
    dataDirs.push(dataDir)
    await start()
    const url = `postgres://postgres@127.0.0.1:${port}/postgres`
    const pool = createPool(url, { max: 3 })
    pools.push(pool)
    const cluster: TestCluster = {
      url,
      port,
      pool,
      async stop(mode = 'fast') {
        await tool('pg_ctl', ['-D', dataDir, '-m', mode, '-w', '-t', '60', 'stop']).catch(() => {})
      },
      start,
    }
    started.push(cluster)
    return cluster
  }

  try {
    const [primaryPort, replicaPort] = [await freePort(), await freePort()]
    const primaryDir = path.join(dir, 'primary')
    await tool('initdb', [
      '-D',
      primaryDir,
      '-U',
      'postgres',
      '--auth=trust',
      '--no-sync',
      '--encoding=UTF8',
      '--locale=C',
    ])
    // Streaming replication is the default of PostgreSQL 15 (wal_level replica, 10 WAL senders,
    // hot standby); written out here so the test does not depend on it. No fsync: a test cluster.
    appendFileSync(
      path.join(primaryDir, 'postgresql.conf'),
      [
        `port = ${primaryPort}`,
        `listen_addresses = '127.0.0.1'`,
        `unix_socket_directories = '${dir}'`,
        'fsync = off',
        'wal_level = replica',
        'max_wal_senders = 4',
        'hot_standby = on',
        '',
      ].join('\n'),
    )
    const primary = await cluster('primary', primaryPort)
    const replicaDir = path.join(dir, 'replica')
    // -R writes standby.signal and primary_conninfo: the copy starts as a streaming replica.
    await tool('pg_basebackup', [
      '-h',
      '127.0.0.1',
      '-p',
      String(primaryPort),
      '-U',
      'postgres',
      '-D',
      replicaDir,
      '-R',
      '-X',
      'stream',
      '-c',
      'fast',
      '--no-sync',
    ])
    // A read that conflicts with replay is cancelled at once, not after the default 30 s.
    appendFileSync(
      path.join(replicaDir, 'postgresql.conf'),
      [`port = ${replicaPort}`, 'max_standby_streaming_delay = 0', ''].join('\n'),
    )
    const replica = await cluster('replica', replicaPort)

    const waitForReplay = async (timeoutMs = 30_000) => {
      const { rows } = await primary.pool.query('SELECT pg_current_wal_flush_lsn()::text AS lsn')
      const target = parseLsn(rows[0].lsn)
      const deadline = Date.now() + timeoutMs
      for (;;) {
        const replayed = await replica.pool
          .query('SELECT pg_last_wal_replay_lsn()::text AS lsn')
          .then((r) => (r.rows[0].lsn === null ? -1n : parseLsn(r.rows[0].lsn)))
        if (replayed >= target) return
        if (Date.now() > deadline) throw new Error('the replica did not catch up with the primary')
        await new Promise((r) => setTimeout(r, 50))
      }
    }
    await waitForReplay()

    let removed: Promise<void> | undefined
    return {
      primary,
      replica,
      waitForReplay,
      remove() {
        removed ??= (async () => {
          await Promise.all(pools.map((p) => p.end().catch(() => {})))
          await Promise.all([replica.stop('immediate'), primary.stop('immediate')])
          process.off('exit', onExit)
          rmSync(dir, { recursive: true, force: true })
        })()
        return removed
      },
    }
  } catch (err) {
    await Promise.all(pools.map((p) => p.end().catch(() => {})))
    await Promise.all(started.map((c) => c.stop('immediate')))
    // A server whose start timed out is still signalled; the files go either way.
    onExit()
    process.off('exit', onExit)
    throw err
  }
}
