/** api_key_usage_hourly: requests per key and hour, by status class (src/server/credentials/key-usage.ts). */
import type { Database } from '@/db/database'

/** One key's counts in one hour, to add to what the table holds. */
export interface KeyUsageIncrement {
  keyId: bigint
  /** Start of the hour. */
  hour: Date
  ok: number
  clientError: number
  rateLimited: number
  serverError: number
  ipRateLimited: number
}

export interface KeyUsageHourRecord {
  hour: Date
  okCount: number
  clientErrorCount: number
  rateLimitedCount: number
  serverErrorCount: number
  ipRateLimitedCount: number
}

/** Adds the counts to their rows, in one statement (counts are additive across processes). */
export async function addKeyUsage(db: Database, increments: readonly KeyUsageIncrement[]): Promise<void> {
  await db.pool.query(
    `INSERT INTO api_key_usage_hourly AS u
                  (key_id, hour, ok_count, client_error_count, rate_limited_count, server_error_count,
                   ip_rate_limited_count)
           SELECT * FROM unnest($1::bigint[], $2::timestamptz[], $3::int[], $4::int[], $5::int[], $6::int[],
                                $7::int[])
           ON CONFLICT (key_id, hour) DO UPDATE SET
             ok_count = u.ok_count + EXCLUDED.ok_count,
             client_error_count = u.client_error_count + EXCLUDED.client_error_count,
             rate_limited_count = u.rate_limited_count + EXCLUDED.rate_limited_count,
             server_error_count = u.server_error_count + EXCLUDED.server_error_count,
             ip_rate_limited_count = u.ip_rate_limited_count + EXCLUDED.ip_rate_limited_count`,
    [
      increments.map((i) => String(i.keyId)),
      increments.map((i) => i.hour.toISOString()),
      increments.map((i) => i.ok),
      increments.map((i) => i.clientError),
      increments.map((i) => i.rateLimited),
      increments.map((i) => i.serverError),
      increments.map((i) => i.ipRateLimited),
    ],
  )
}

export async function deleteKeyUsageBefore(db: Database, before: Date): Promise<void> {
  await db.pool.query('DELETE FROM api_key_usage_hourly WHERE hour < $1', [before.toISOString()])
}

/** A key's hours from `since` on (hours without requests have no row). */
export function findKeyUsageHours(db: Database, keyId: bigint, since: Date): Promise<KeyUsageHourRecord[]> {
  return db.prisma.apiKeyUsageHour.findMany({
    where: { keyId, hour: { gte: since } },
  })
}
