/**
 * The hex SHA-256 the database stores: hashes of API key and demo token
 * secrets (never the secrets), media content addresses and the hash of a
 * media URL. Writer and reader must compute it the same way, hence one function.
 */
import { createHash } from 'node:crypto'

export function sha256Hex(data: string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex')
}
