/**
 * How far a streaming replica is behind its primary, in time
 * (docs/operations.md, "Read replicas"). The probe samples the primary's WAL
 * position every second; a replica that has not yet replayed a sample has
 * been missing data the primary had at that moment. Its lag is the age of the
 * oldest sample it lacks — 0 when it holds the newest.
 *
 * Why not `now() - pg_last_xact_replay_timestamp()`: on a primary that writes
 * nothing for a minute it reads a minute, although the replica lacks nothing.
 * Why not the indexer's head in blocks: one backfill commit moves it by
 * thousands of blocks (a healthy replica would flap), and it misses writes
 * that move no block (metadata, media).
 */

/** A PostgreSQL LSN as text (`16/B374D848`) → its byte position. */
export function parseLsn(text: string): bigint {
  const match = /^([0-9A-Fa-f]{1,8})\/([0-9A-Fa-f]{1,8})$/.exec(text)
  if (!match) throw new Error(`not an LSN: ${JSON.stringify(text)}`)
  return (BigInt(`0x${match[1]}`) << 32n) | BigInt(`0x${match[2]}`)
}

interface Sample {
  /** performance.now() when the position was read. */
  at: number
  lsn: bigint
}

/** The primary's recent WAL positions, oldest first. */
export class PrimaryWalHistory {
  private samples: Sample[] = []

  /** @param keepMs how much history to keep; beyond it a lag is only known to be at least that old. */
  constructor(private readonly keepMs: number) {}

  /** A reading of the primary's flushed WAL position (what walsenders may send). */
  record(at: number, lsn: bigint): void {
    const newest = this.samples.at(-1)
    // A lower position is another server (DATABASE_URL now points elsewhere): start over.
    if (newest && lsn < newest.lsn) this.samples = []
    if (!newest || lsn !== newest.lsn) this.samples.push({ at, lsn })
    // The newest sample always stays: with the primary unreachable it is what replicas are compared with.
    while (this.samples.length > 1 && at - this.samples[0]!.at > this.keepMs) this.samples.shift()
  }

  /**
   * Milliseconds the replica at `replayed` has been missing data the primary
   * had; undefined before the primary's position was ever read.
   */
  lagMs(replayed: bigint, now: number): number | undefined {
    if (this.samples.length === 0) return undefined
    const missing = this.samples.find((s) => s.lsn > replayed)
    return missing === undefined ? 0 : Math.max(0, now - missing.at)
  }
}
