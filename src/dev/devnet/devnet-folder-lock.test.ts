/**
 * One devnet per DATA_DIR/devnet (src/dev/folder-lock.ts, taken by startDevnet).
 *
 * With the embedded database, PGlite's pid file refuses a second `npm start` before the devnet
 * starts. With DATABASE_URL set (a real PostgreSQL, e.g. two deployments or a second terminal
 * pointed at another schema) and no RPC_URL, nothing else guards DATA_DIR/devnet: two anvils on
 * one anvil-state.json and deployment.json would diverge and overwrite each other's saved
 * chain. Shows that the second devnet is refused with an error naming the folder and the
 * holder, and that the folder is free again once the first has stopped.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import pino from 'pino'
import { afterAll, describe, expect, it } from 'vitest'
import { type Devnet, startDevnet } from './index'

const logger = pino({ level: 'silent' })
const dataDir = mkdtempSync(path.join(tmpdir(), 'nft-devnet-lock-'))
const running: Devnet[] = []

afterAll(async () => {
  for (const devnet of running.splice(0)) await devnet.stop().catch(() => {})
  rmSync(dataDir, { recursive: true, force: true })
})

describe('the embedded devnet’s data folder', () => {
  it('refuses a second devnet on a DATA_DIR whose devnet is running', async () => {
    running.push(await startDevnet({ dataDir, logger, activity: false }))
    let second: Devnet | undefined
    let error: unknown
    try {
      second = await startDevnet({ dataDir, logger, activity: false })
      running.push(second)
    } catch (err) {
      error = err
    }
    expect(
      second && `a second anvil serves ${second.rpcUrl} from the same ${path.join(dataDir, 'devnet')}`,
    ).toBeUndefined()
    expect(String(error)).toContain(`${path.join(dataDir, 'devnet')} is in use by process ${process.pid}`)

    await running.shift()!.stop()
    running.push(await startDevnet({ dataDir, logger, activity: false }))
  }, 120_000)
})
