/**
 * A per-process cap on the database connections one subject — an API key, a
 * demo token or, for requests without a credential, a client address — uses
 * at once. A subject's requests beyond its share wait in the subject's own
 * queue instead of the pool's, so one busy subject cannot make everyone else
 * wait for a connection (docs/auth.md, "Admission before waiting").
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

  /** Runs work (its database reads) in one of the subject's places. */
  async run<T>(subject: string, work: () => Promise<T>): Promise<T> {
    const wait = this.enter(subject)
    if (wait) await wait
    try {
      return await work()
    } finally {
      this.leave(subject)
    }
  }

  /** Requests of the subject running and waiting (status and tests). */
  load(subject: string): { running: number; waiting: number } {
    const queue = this.subjects.get(subject)
    return { running: queue?.running ?? 0, waiting: queue?.waiting.length ?? 0 }
  }
}
