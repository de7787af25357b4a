/**
 * /v1 reads on a real PostgreSQL streaming replica (DATABASE_READ_URL): a
 * primary and a replica made by pg_basebackup for this file
 * (src/test/postgres-replication.ts), the web server in-process. Reads come
 * from the replica; a replica whose replay is paused answers what it holds —
 * freshness headers, confirmations and the indexer status included — and is
 * skipped once it lags beyond DATABASE_READ_MAX_LAG_S; a replica that dies,
 * even in the middle of a read, costs no request an error.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { migrate } from '@/db/migrate'
import { requestSnapshot } from '@/server/api/read/indexer-snapshot'
import { readOnReplica } from '@/server/api/read/replica-read'
import { type ApiServer, startApiServer } from '@/test/api-client'
import { addr, SimulatedChain, ZERO } from '@/test/api-fixtures'
import { type ReplicatedPostgres, startReplicatedPostgres } from '@/test/postgres-replication'

const COLLECTION = addr('replicated collection')
const TRANSFERS = `/v1/collections/${COLLECTION}/transfers?limit=100`
const STATUS = '/v1/indexer/status'
/** The default bound, DATABASE_READ_MAX_LAG_S. */
const MAX_LAG_S = 5

let pgs: ReplicatedPostgres
let api: ApiServer
let chain: SimulatedChain

async function waitFor(check: () => boolean | Promise<boolean>, label: string, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${label}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

const replicaStatus = () => api.services.reads.status()[0]!

/** Mines blocks with one mint each (token id = block number). */
const mine = (blocks: number) =>
  chain.mine(blocks, (block, emit) =>
    emit({ collection: COLLECTION, tokenId: block, from: ZERO, to: addr('holder') }),
  )

/** What one request saw: its head, its transfers' blocks and confirmations, and the status it read. */
async function observe() {
  const transfers = await api.json<{ data: Array<{ block_number: string; confirmations: number }> }>(
    TRANSFERS,
  )
  const status = await api.json<{ data: { last_seen_block: string; last_indexed_block: string } }>(STATUS)
  const head = transfers.headers.get('X-Chain-Head')
  expect(head).not.toBeNull()
  for (const t of transfers.body.data) expect(t.confirmations).toBe(Number(head) - Number(t.block_number))
  return {
    head,
    blocks: transfers.body.data.map((t) => Number(t.block_number)).sort((a, b) => a - b),
    statusHead: status.body.data.last_seen_block,
    statusHeader: status.headers.get('X-Chain-Head'),
  }
}

/** A request's read context as the REST layer builds it, for calling readOnReplica directly. */
function readTarget() {
  const db = api.services.reads.primary
  return {
    config: api.config,
    db,
    snapshot: requestSnapshot({ db, config: api.config }),
    responseHeaders: {},
  }
}

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i)

beforeAll(async () => {
  pgs = await startReplicatedPostgres()
  await migrate(pgs.primary.url)
  chain = new SimulatedChain(pgs.primary.pool)
  await chain.init()
  await mine(5)
  api = await startApiServer(pgs.primary.url, {
    DATABASE_URL: pgs.primary.url,
    DATABASE_READ_URL: pgs.replica.url,
  })
  await pgs.waitForReplay()
  await waitFor(() => replicaStatus().usable, 'the replica to qualify')
}, 60_000)

afterAll(async () => {
  try {
    await api?.close()
  } finally {
    await pgs?.remove()
  }
})

describe('reads on a streaming replica (DATABASE_READ_URL)', () => {
  it('answer what the replica holds while its replay is paused, never more', async () => {
    await pgs.replica.pool.query('SELECT pg_wal_replay_pause()')
    await waitFor(
      async () =>
        (await pgs.replica.pool.query('SELECT pg_get_wal_replay_pause_state() AS s')).rows[0].s === 'paused',
      'replay to pause',
    )
    // The primary moves on by three blocks (a mint in each); the replica does not.
    await mine(3)
    const primaryHead = await pgs.primary.pool.query('SELECT last_seen_block::text AS b FROM indexer_state')
    expect(primaryHead.rows[0].b).toBe('8')

    const seen = await observe()
    // Still well inside the lag bound: the replica served these reads.
    expect(replicaStatus()).toMatchObject({ usable: true, reason: 'ok' })
    expect(seen).toEqual({ head: '5', blocks: range(1, 5), statusHead: '5', statusHeader: '5' })
    // A token only the primary holds is not found on the replica.
    expect((await api.request(`/v1/nfts/${COLLECTION}/7`)).status).toBe(404)
  })

  it('skip the replica once it lags beyond the bound, and take it back when it catches up', async () => {
    await waitFor(() => replicaStatus().reason === 'lagging', 'the replica to count as lagging')
    expect(replicaStatus().lagSeconds).toBeGreaterThan(MAX_LAG_S)
    // Reads now come from the primary.
    expect(await observe()).toEqual({ head: '8', blocks: range(1, 8), statusHead: '8', statusHeader: '8' })
    expect((await api.request(`/v1/nfts/${COLLECTION}/7`)).status).toBe(200)

    await pgs.replica.pool.query('SELECT pg_wal_replay_resume()')
    await waitFor(() => replicaStatus().usable, 'the replica to qualify again')
    expect(replicaStatus().lagSeconds).toBeLessThanOrEqual(MAX_LAG_S)
    expect(await observe()).toEqual({ head: '8', blocks: range(1, 8), statusHead: '8', statusHeader: '8' })
  })

  it('retry a read on the primary when replay cancels it on the replica (a conflict with recovery)', async () => {
    await pgs.primary.pool.query('CREATE TABLE replay_conflict (n int)')
    await pgs.waitForReplay()
    await waitFor(() => replicaStatus().usable, 'the replica to qualify')
    const target = readTarget()
    let attempts = 0
    const read = readOnReplica(api.services.reads, target, async () => {
      attempts++
      const { rows } = await target.db.pool.query(
        'SELECT pg_is_in_recovery() AS standby, pg_sleep(1.5), (SELECT count(*) FROM replay_conflict)',
      )
      return rows[0].standby as boolean
    })
    // The read holds a lock on the table on the replica when the primary alters it:
    // replaying that needs the lock, and the replica cancels the read (SQLSTATE 40001).
    await new Promise((r) => setTimeout(r, 500))
    await pgs.primary.pool.query('ALTER TABLE replay_conflict ADD COLUMN m int')
    expect(await read).toBe(false)
    expect(attempts).toBe(2)
    await waitFor(() => replicaStatus().usable, 'the replica to qualify again')
  })

  it('retry a read on the primary when its replica dies in the middle of it', async () => {
    const reads = api.services.reads
    const target = readTarget()
    let attempts = 0
    const read = readOnReplica(reads, target, async () => {
      attempts++
      const { rows } = await target.db.pool.query('SELECT pg_is_in_recovery() AS standby, pg_sleep(1.5)')
      return rows[0].standby as boolean
    })
    // The first attempt is sleeping on the replica when it goes down.
    await new Promise((r) => setTimeout(r, 500))
    await pgs.replica.stop('immediate')
    expect(await read).toBe(false)
    expect(attempts).toBe(2)
    expect(replicaStatus().usable).toBe(false)
    expect(['read failed', 'unreachable']).toContain(replicaStatus().reason)

    // Back up: the replica resumes streaming and serves reads again.
    await pgs.replica.start()
    await waitFor(() => replicaStatus().usable, 'the restarted replica to qualify')
  })

  it('keep answering 200 from the primary when the replica is lost under load', async () => {
    const paths = [TRANSFERS, STATUS, `/v1/nfts/${COLLECTION}/3`, `/v1/collections/${COLLECTION}/nfts`]
    const statuses: number[] = []
    const failures: string[] = []
    const heads = new Set<string | null>()
    // The loss comes after 20 answers, and the clients go on for 20 more and at least
    // two probes after it: counted, not timed, so a slow machine cannot shorten either side.
    let stopAt = 0
    let stoppedAt: number | undefined
    const stopped = (async () => {
      await waitFor(() => statuses.length >= 20, 'reads before the loss')
      stopAt = statuses.length
      await pgs.replica.stop('immediate')
      stoppedAt = Date.now()
    })()
    const done = () =>
      stoppedAt !== undefined && Date.now() - stoppedAt > 2000 && statuses.length >= stopAt + 20
    // Four clients in a loop, from before the loss until well after the probe noticed it.
    await Promise.all(
      range(0, 3).map(async (client) => {
        for (let i = 0; !done(); i++) {
          const path = paths[(client + i) % paths.length]!
          const res = await api.request(path)
          const body = await res.text()
          statuses.push(res.status)
          if (res.status !== 200) failures.push(`${res.status} ${path}: ${body}`)
          heads.add(res.headers.get('X-Chain-Head'))
        }
      }),
    )
    await stopped
    expect(failures).toEqual([])
    expect([...heads]).toEqual(['8'])
    expect(replicaStatus()).toMatchObject({ usable: false, reason: 'unreachable' })
    expect(await observe()).toEqual({ head: '8', blocks: range(1, 8), statusHead: '8', statusHeader: '8' })
  })
})
