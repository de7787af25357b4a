/**
 * Proofs of a random sample of backfill blocks (docs/indexer.md,
 * "Verification"). Reads that agree only show that they agree: two reads of
 * one node, or of endpoints behind one log index, leave out the same logs
 * when the index lacks them. A share of the blocks is therefore proven by
 * receipts as well; once a proof shows that agreeing reads lacked logs, the
 * log index is not trusted and every block is proven.
 */
import { mulberry32 } from '@/lib/random'

/** Share of backfill blocks proven by default: one in a hundred. */
export const DEFAULT_PROOF_SAMPLE_RATE = 0.01

export interface ProofSampleOptions {
  /** Share of blocks (0..1) proven. */
  rate: number
  /** The sample's seed; by default drawn at start, so that a provider cannot tell which blocks are proven. */
  seed?: number
}

export class ProofPolicy {
  readonly rate: number
  /** Sampled blocks proven so far (what the sample costs: two requests each). */
  provenSamples = 0
  private readonly seed: number

  constructor(
    options: ProofSampleOptions,
    /** A proof showed that agreeing reads lacked logs: every block is proven. */
    public untrusted = false,
    /** Told once, when the log index stops being trusted. */
    readonly onUntrusted: () => void = () => undefined,
  ) {
    this.rate = Math.min(1, Math.max(0, options.rate))
    this.seed = options.seed ?? Math.floor(Math.random() * 2 ** 32)
  }

  /**
   * The blocks of [from, to] in the sample: each block is in it or not by
   * its number alone (under the seed), however the blocks are split into ranges.
   */
  sampled(from: bigint, to: bigint): bigint[] {
    const out: bigint[] = []
    if (this.rate === 0) return out
    for (let n = from; n <= to; n++) {
      const draw = mulberry32((this.seed ^ Math.imul(Number(n % 4294967296n), 0x9e3779b1)) >>> 0)()
      if (draw < this.rate) out.push(n)
    }
    return out
  }

  distrust(): void {
    if (this.untrusted) return
    this.untrusted = true
    this.onUntrusted()
  }
}
