/**
 * What the orchestrator does when a supervised process exits (docs/operations.md,
 * "Crashes and restarts"): someone stopped it, so the service stops; it refused
 * to start, which a restart cannot cure; or it crashed, and starts again after a
 * back-off that doubles up to 30 s and starts over after a healthy run.
 */
import { STOP_SIGNALS } from '@/config/stop-signals'

/** Exit codes that refuse to start: 2 the configuration, 3 a node on another chain than CHAIN_ID. */
const REFUSALS = [2, 3]

/** A process that ran this long before it crashed was healthy: its back-off starts from 1 s again. */
const HEALTHY_RUN_MS = 60_000

export type AfterExit =
  | { action: 'stop' }
  | { action: 'refuse' }
  | { action: 'restart'; delayMs: number; restarts: number }

export function afterExit(
  exit: { code: number | null; signal: string | null; ranMs: number },
  restarts: number,
): AfterExit {
  if (exit.code === 0 || (STOP_SIGNALS as readonly (string | null)[]).includes(exit.signal))
    return { action: 'stop' }
  if (exit.code !== null && REFUSALS.includes(exit.code)) return { action: 'refuse' }
  const before = exit.ranMs >= HEALTHY_RUN_MS ? 0 : restarts
  return {
    action: 'restart',
    delayMs: Math.min(30_000, 1000 * 2 ** Math.min(before, 5)),
    restarts: before + 1,
  }
}
