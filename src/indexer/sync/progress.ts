import type { Logger } from 'pino'

/** Periodic backfill progress line: blocks/s, events/s and ETA to the target block. */
export class BackfillProgress {
  private readonly started = performance.now()
  private lastLog = 0
  private blocks = 0n
  private events = 0

  constructor(
    private readonly logger: Logger,
    private readonly intervalMs = 5_000,
  ) {}

  record(blocks: bigint, events: number, cursor: bigint, target: bigint): void {
    this.blocks += blocks
    this.events += events
    const now = performance.now()
    if (now - this.lastLog < this.intervalMs) return
    this.lastLog = now
    const seconds = (now - this.started) / 1000
    const blocksPerSecond = Number(this.blocks) / seconds
    const remaining = target > cursor ? Number(target - cursor) : 0
    const etaSeconds = blocksPerSecond > 0 ? Math.round(remaining / blocksPerSecond) : null
    this.logger.info(
      {
        block: cursor.toString(),
        target: target.toString(),
        blocksPerSecond: Math.round(blocksPerSecond),
        eventsPerSecond: Math.round(this.events / seconds),
        etaSeconds,
      },
      `backfill at block ${cursor}/${target}: ${Math.round(blocksPerSecond)} blocks/s, ${Math.round(this.events / seconds)} events/s, ETA ${formatEta(etaSeconds)}`,
    )
  }
}

function formatEta(seconds: number | null): string {
  if (seconds === null) return 'unknown'
  if (seconds < 60) return `${seconds}s`
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m${seconds % 60}s`
  return `${Math.floor(seconds / 3600)}h${Math.floor((seconds % 3600) / 60)}m`
}
