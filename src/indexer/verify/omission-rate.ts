/**
 * How many reads of a range must agree before it counts as verified, from how
 * often answers have recently left logs out (docs/indexer.md, "Verification").
 *
 * A provider that leaves one of a range's k logs out of an answer with
 * probability p makes n reads agree on the same wrong answer with a chance of
 * about k·(p/k)ⁿ = pⁿ / kⁿ⁻¹. Two reads are plenty for a dense range from a
 * sound provider, not for a range of three logs from one that drops a log
 * from every third answer: there it takes six.
 */

/** The omission rate planned with at the least: one answer in a hundred. */
export const ASSUMED_RATE = 0.01
/**
 * The rate planned with until LEARNING_ANSWERS answers have been counted: one
 * in twenty, as often as hosted providers were measured to leave a log out.
 * A provider that drops logs far more often is only known once two reads of a
 * range disagree; planned at one in a hundred from the start, the first ranges
 * of such a provider were settled on two reads that had left out the same log.
 */
export const UNSEEN_RATE = 0.05
export const LEARNING_ANSWERS = 100
/** The chance, per range, of counting a wrong answer as verified that the number of reads keeps below. */
export const ACCEPTED_RISK = 1e-5
/** Reads asked to agree at most: beyond this a range waits (a repeat of the step reads it afresh). */
export const MAX_AGREEING = 6
/** Answers the estimate is made of: older ones weigh half once this many are counted. */
const WINDOW = 200

/** The agreeing complete reads that bring the chance of a wrong answer for `logs` logs below ACCEPTED_RISK. */
export function readsNeeded(logs: number, rate: number): number {
  // A range whose reads all came back empty may hold one log every read left out.
  const k = Math.max(1, logs)
  for (let n = 2; n < MAX_AGREEING; n++) if (rate ** n / k ** (n - 1) <= ACCEPTED_RISK) return n
  return MAX_AGREEING
}

/** Recent answers, and how many of them lacked logs that the settled answer of their range holds. */
export class OmissionRate {
  private answers = 0
  private incomplete = 0

  /** Counts the answers of one settled range (or proven block), `incomplete` of which lacked logs. */
  record(answers: number, incomplete: number): void {
    this.answers += answers
    this.incomplete += incomplete
    if (this.answers > WINDOW) {
      this.answers /= 2
      this.incomplete /= 2
    }
  }

  /** The share of recent answers that lacked logs (0 before any): what an operator sees of the provider. */
  observed(): number {
    return this.answers === 0 ? 0 : this.incomplete / this.answers
  }

  /**
   * The rate to plan with, counting the reads of a range not settled yet:
   * never below ASSUMED_RATE (UNSEEN_RATE while fewer than LEARNING_ANSWERS
   * answers are counted), and a few answers that lacked logs weigh fully (one
   * in two is taken as 50 %), so a provider seen dropping logs is read more
   * from the start.
   */
  estimate(answers = 0, incomplete = 0): number {
    const total = this.answers + answers
    const floor = this.answers < LEARNING_ANSWERS ? UNSEEN_RATE : ASSUMED_RATE
    if (total === 0) return floor
    return Math.max(floor, (this.incomplete + incomplete) / total)
  }

  /** readsNeeded at the current estimate, counting the reads of the range being settled. */
  readsNeeded(logs: number, answers = 0, incomplete = 0): number {
    return readsNeeded(logs, this.estimate(answers, incomplete))
  }
}
