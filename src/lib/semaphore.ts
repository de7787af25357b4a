/**
 * A counting semaphore with a bounded wait list: `tryAcquire` never waits,
 * `acquire` waits its turn (first come, first served) unless the wait list
 * is full, then it answers null at once. Used where a burst must be bounded
 * in memory or CPU (animation fetches in the indexer, thumbnails on the web
 * server: docs/metadata.md, docs/api.md "Media path").
 */
export class Semaphore {
  private active = 0
  private readonly waiting: Array<() => void> = []

  constructor(
    readonly capacity: number,
    /** Waiters allowed beyond the capacity; Infinity: any number. */
    readonly maxWaiting = Infinity,
  ) {}

  get inUse(): number {
    return this.active
  }

  /** A release function, or null when both the slots and the wait list are full. */
  async acquire(): Promise<(() => void) | null> {
    if (this.active < this.capacity) {
      this.active++
      return this.releaser()
    }
    if (this.waiting.length >= this.maxWaiting) return null
    await new Promise<void>((resolve) => this.waiting.push(resolve))
    return this.releaser()
  }

  private releaser(): () => void {
    let released = false
    return () => {
      if (released) return
      released = true
      const next = this.waiting.shift()
      // The slot passes straight to the next waiter (active stays the same).
      if (next) next()
      else this.active--
    }
  }
}
