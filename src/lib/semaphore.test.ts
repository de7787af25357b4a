import { describe, expect, it } from 'vitest'
import { Semaphore } from './semaphore'

describe('Semaphore', () => {
  it('lets `capacity` holders in, queues up to maxWaiting in order, refuses the rest at once', async () => {
    const s = new Semaphore(2, 1)
    const a = await s.acquire()
    const b = await s.acquire()
    expect(s.inUse).toBe(2)
    const order: string[] = []
    const waiting = s.acquire().then((release) => {
      order.push('c')
      return release
    })
    expect(await s.acquire()).toBeNull()
    a!()
    a!() // a second release of the same slot changes nothing
    const c = await waiting
    expect(order).toEqual(['c'])
    expect(s.inUse).toBe(2)
    b!()
    c!()
    expect(s.inUse).toBe(0)
    expect(await s.acquire()).not.toBeNull()
  })
})
