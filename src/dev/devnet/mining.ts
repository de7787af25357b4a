/**
 * Work on the devnet with every kind of mining stopped: blocks then come only from the work's
 * own `mine` calls. Seeding and reorganisations send many transactions in a row; a block mined
 * by the interval timer in the middle of them could take a transaction while the node hands the
 * next one the same nonce, and that one silently replaces it (a seeded chain short of mints).
 */
import type { DevnetClients } from './collections'

export async function withMiningPaused<T>(
  clients: DevnetClients,
  /** Interval mining to restore afterwards, in seconds; undefined: none. */
  blockTimeSeconds: number | undefined,
  work: () => Promise<T>,
): Promise<T> {
  const automine = await clients.test.getAutomine()
  if (automine) await clients.test.setAutomine(false)
  await clients.test.setIntervalMining({ interval: 0 })
  try {
    return await work()
  } finally {
    if (blockTimeSeconds) await clients.test.setIntervalMining({ interval: blockTimeSeconds })
    if (automine) await clients.test.setAutomine(true)
  }
}
