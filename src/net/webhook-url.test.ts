/**
 * The create-time check of a webhook destination (webhook-url.ts): a host whose
 * name servers never answer is refused by the deadline, and such lookups take
 * one resolver thread at a time however many are asked for at once.
 */
import { afterEach, describe, expect, it, vi } from 'vitest'
import { ADDRESS_CHECK, AddressCheckBusy, webhookUrlRefusal } from './webhook-url'

const none = new Set<string>()

describe('webhookUrlRefusal', () => {
  afterEach(() => vi.useRealTimers())

  it('answers by its deadline when the name never resolves, one lookup at a time, refusing a crowd', async () => {
    vi.useFakeTimers()
    let inFlight = 0
    let most = 0
    const started: string[] = []
    const finish: Array<() => void> = []
    // A resolver that answers only when told to, as a name server that never does.
    const hanging = (url: URL) =>
      new Promise<string | null>((resolve) => {
        started.push(url.hostname)
        inFlight++
        most = Math.max(most, inFlight)
        finish.push(() => {
          inFlight--
          resolve(null)
        })
      })
    const ask = (host: string) => webhookUrlRefusal(`https://${host}/hook`, none, hanging)
    const first = ask('a.slow.test')
    const waiting = Array.from({ length: ADDRESS_CHECK.maxWaiting }, (_, i) => ask(`w${i}.slow.test`))
    // The queue is full: the next is told to come back, not refused as a bad URL.
    await expect(ask('one-too-many.slow.test')).rejects.toBeInstanceOf(AddressCheckBusy)

    await vi.advanceTimersByTimeAsync(ADDRESS_CHECK.deadlineMs)
    expect(await first).toBe(`is not reachable for webhooks: a.slow.test did not resolve within 3 s`)
    for (const w of waiting) expect(await w).toMatch(/did not resolve within 3 s$/)
    // One lookup ran; the waiting ones gave up before their turn and never started one.
    expect(started).toEqual(['a.slow.test'])
    finish.shift()!()
    await vi.advanceTimersByTimeAsync(0)
    expect(started).toEqual(['a.slow.test'])
    expect(most).toBe(1)

    // With the resolver free again, a host that answers is checked as before.
    const answered = webhookUrlRefusal('https://fine.test/hook', none, async () => null)
    expect(await answered).toBeNull()
    const refused = webhookUrlRefusal('https://bad.test/hook', none, async () => 'Refused 10.0.0.1 (private)')
    expect(await refused).toBe('is not reachable for webhooks: Refused 10.0.0.1 (private)')
  })
})
