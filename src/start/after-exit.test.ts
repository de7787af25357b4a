/** The orchestrator's decision when a supervised process exits. */
import { describe, expect, it } from 'vitest'
import { afterExit } from './after-exit'

const crash = (ranMs: number) => ({ code: 1, signal: null, ranMs })

describe('afterExit', () => {
  it('stops the service when someone stopped the process: exit 0, SIGINT, SIGTERM or SIGHUP', () => {
    expect(afterExit({ code: 0, signal: null, ranMs: 5 }, 0)).toEqual({ action: 'stop' })
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'])
      expect(afterExit({ code: null, signal, ranMs: 5 }, 0)).toEqual({ action: 'stop' })
  })

  it('gives up on a refusal to start: bad configuration (2) or a node on another chain (3)', () => {
    expect(afterExit({ code: 2, signal: null, ranMs: 5 }, 0)).toEqual({ action: 'refuse' })
    expect(afterExit({ code: 3, signal: null, ranMs: 5 }, 4)).toEqual({ action: 'refuse' })
  })

  it('restarts a crash after 1, 2, 4 … at most 30 s, from 1 s again after a healthy minute', () => {
    const delays: number[] = []
    let restarts = 0
    for (let i = 0; i < 7; i++) {
      const next = afterExit(crash(1_000), restarts)
      if (next.action !== 'restart') throw new Error(next.action)
      delays.push(next.delayMs)
      restarts = next.restarts
    }
    expect(delays).toEqual([1000, 2000, 4000, 8000, 16000, 30000, 30000])
    expect(afterExit({ code: null, signal: 'SIGKILL', ranMs: 1_000 }, restarts)).toMatchObject({
      delayMs: 30000,
    })
    expect(afterExit(crash(60_000), restarts)).toEqual({ action: 'restart', delayMs: 1000, restarts: 1 })
  })
})
