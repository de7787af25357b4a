/**
 * A per-process cap on the database connections one subject — a client
 * address (IPv6 by /64), an API key, a demo token, a signed-in portal user —
 * uses at once. A request takes a place in its client address's share and,
 * when it acts for a key, token or user, in that one's too: always the
 * address first, so no two requests each hold a place the other waits for.
 * A subject's requests beyond its share wait in the subject's own queue
 * instead of the pool's, so one busy client cannot make everyone else wait
 * for a connection (docs/auth.md, "Admission before waiting").
 */
interface SubjectQueue {
  running: number
  waiting: (() => void)[]
}

export class PoolShares {
  private readonly subjects = new Map<string, SubjectQueue>()

  /** share: most requests of one subject that query the database at the same time. */
  constructor(readonly share: number) {
    if (!Number.isInteger(share) || share < 1) throw new RangeError('share must be a positive integer')
  }

  /**
   * Takes one of the subject's places: undefined when it was free (no promise
   * on the common path), else a promise that settles when one frees. Every
   * enter is followed by exactly one leave, once the place is held.
   */
  enter(subject: string): Promise<void> | undefined {
    const queue = this.subjects.get(subject)
    if (!queue) {
      this.subjects.set(subject, { running: 1, waiting: [] })
      return undefined
    }
    if (queue.running < this.share) {
      queue.running++
      return undefined
    }
    return new Promise((resolve) => queue.waiting.push(resolve))
  }

  /** Gives the place to the subject's next waiting request, or frees it. */
  leave(subject: string): void {
    const queue = this.subjects.get(subject)
    if (!queue) return
    const next = queue.waiting.shift()
    if (next) {
      next()
      return
    }
    queue.running--
    if (queue.running === 0) this.subjects.delete(subject)
  }

  /** Runs work (its database reads) in a place of each subject, taken in the order given. */
  async run<T>(subjects: readonly string[], work: () => Promise<T>): Promise<T> {
    let held = 0
    try {
      for (const subject of subjects) {
        const wait = this.enter(subject)
        held++
        if (wait) await wait
      }
      return await work()
    } finally {
      for (let i = held - 1; i >= 0; i--) this.leave(subjects[i]!)
    }
  }

  /** Requests of the subject running and waiting (status and tests). */
  load(subject: string): { running: number; waiting: number } {
    const queue = this.subjects.get(subject)
    return { running: queue?.running ?? 0, waiting: queue?.waiting.length ?? 0 }
  }
}
