import { z } from 'zod'

/** A contract address as people paste it (any case); stored and compared lowercase. */
const collectionAddress = z
  .string()
  .trim()
  .regex(/^0x[0-9a-fA-F]{40}$/, 'must be a 0x-prefixed 40-hex-digit address')
  .transform((a) => a.toLowerCase())

export const refreshTokenInput = z.strictObject({
  address: collectionAddress,
  token_id: z
    .string()
    .trim()
    .regex(/^[0-9]{1,78}$/, 'must be a decimal token id of 1 to 78 digits'),
})

export const refreshCollectionInput = z.strictObject({ address: collectionAddress })
