import { randomBytes } from 'node:crypto'

/** Every test schema starts with this, then its creation time (base 36) and a random part. */
export const TEST_SCHEMA_PREFIX = 'test_'

export function newTestSchemaName(): string {
  return `${TEST_SCHEMA_PREFIX}${Date.now().toString(36)}_${randomBytes(5).toString('hex')}`
}

/** When a test schema was made (ms since epoch), read back from its name. */
export function testSchemaCreatedAt(schema: string): number | undefined {
  const match = /^test_([0-9a-z]+)_[0-9a-f]+$/.exec(schema)
  const time = match ? Number.parseInt(match[1] ?? '', 36) : Number.NaN
  return Number.isFinite(time) ? time : undefined
}
