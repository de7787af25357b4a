/**
 * Refused sign-ins in the audit trail (docs/auth.md, "Portal sessions").
 *
 * A refused message claims an address it did not prove, so anyone can cause
 * one for any address. Hence:
 *  - only an address that already has a user gets an event
 *    (`sign_in_refused`, with the refusal's code): a row per unknown address
 *    would let anyone fill the table with invented addresses; those refusals
 *    are only logged;
 *  - at most REFUSALS_PER_MINUTE events per address and minute, per web
 *    process; further refusals in that minute are only logged.
 * A message that does not parse names no address and writes nothing.
 */
import { ParsedMessage } from '@spruceid/siwe-parser'
import type { Database } from '@/db/database'
import { autocommit } from '@/db/queries/transaction'
import { findUserIdByAddress } from '@/db/queries/users'
import { writeAuditEvent } from './audit'
import { FixedWindowCounter } from './fixed-window'
import type { RequestMeta } from './portal-sessions'
import type { SiweErrorCode } from './siwe'

export const REFUSALS_PER_MINUTE = 5

/** What became of one refusal (for the log and the tests). */
export type RefusalRecord = 'recorded' | 'no_address' | 'unknown_user' | 'rate_limited'

/** The lowercase address a message claims, or null when it does not parse. */
function claimedAddress(message: string): string | null {
  if (message.length > 4096) return null
  try {
    return new ParsedMessage(message).address.toLowerCase()
  } catch {
    return null
  }
}

export class SignInRefusals {
  private readonly perAddress: FixedWindowCounter

  constructor(
    private readonly db: Database,
    limitPerMinute = REFUSALS_PER_MINUTE,
  ) {
    this.perAddress = new FixedWindowCounter(limitPerMinute, 60_000)
  }

  async record(message: string, reason: SiweErrorCode, meta: RequestMeta): Promise<RefusalRecord> {
    const address = claimedAddress(message)
    if (!address) return 'no_address'
    // Counted before the user lookup: a flood costs memory lookups, not queries.
    if (!this.perAddress.take(address).allowed) return 'rate_limited'
    const user = await findUserIdByAddress(this.db, address)
    if (!user) return 'unknown_user'
    // Outside a transaction: the event and the trim of the trail each commit on their own.
    await writeAuditEvent(
      autocommit(this.db),
      { userId: user.id, address, ...meta },
      { action: 'sign_in_refused', details: { reason } },
    )
    return 'recorded'
  }
}
