/**
 * Array parameters in PostgreSQL's binary format (the layout of array_send),
 * for the bulk statements of the ingest path: `unnest($1::varchar[], …)`.
 *
 * A commit sends tens of thousands of addresses, hashes, token ids and
 * timestamps. As text array literals they cost twice: the indexer builds and
 * escapes every element, and the server scans every character back
 * (array_in, then numeric_in and timestamptz_in per element). In binary form
 * each element is a length and its bytes, which the server copies; strings
 * need no quoting at all. node-postgres sends a Buffer parameter in binary
 * format; the SQL cast names the type, and the element type written here
 * must be the same (the server refuses a mismatch).
 */

/** The element types the ingest path sends, with their PostgreSQL type OIDs. */
const ELEMENT_OID = {
  varchar: 1043,
  int8: 20,
  int4: 23,
  bool: 16,
  numeric: 1700,
  timestamptz: 1184,
} as const

export type PgArrayType = keyof typeof ELEMENT_OID

/** 2000-01-01T00:00:00Z, PostgreSQL's epoch, in Unix seconds. */
const PG_EPOCH_SECONDS = 946_684_800n
const HEADER_BYTES = 20

/** ndim 1, the null flag, the element type, then the one dimension (length, lower bound 1). */
function writeHeader(buf: Buffer, length: number, hasNull: boolean, type: PgArrayType): number {
  buf.writeInt32BE(1, 0)
  buf.writeInt32BE(hasNull ? 1 : 0, 4)
  buf.writeInt32BE(ELEMENT_OID[type], 8)
  buf.writeInt32BE(length, 12)
  buf.writeInt32BE(1, 16)
  return HEADER_BYTES
}

/** `varchar[]`: any strings (UTF-8), nulls allowed. */
export function varcharArray(values: ReadonlyArray<string | null | undefined>): Buffer {
  let size = HEADER_BYTES
  let hasNull = false
  for (const v of values) {
    size += 4
    if (v === null || v === undefined) hasNull = true
    else size += Buffer.byteLength(v, 'utf8')
  }
  const buf = Buffer.allocUnsafe(size)
  let at = writeHeader(buf, values.length, hasNull, 'varchar')
  for (const v of values) {
    if (v === null || v === undefined) {
      at = buf.writeInt32BE(-1, at)
      continue
    }
    const written = buf.write(v, at + 4, 'utf8')
    buf.writeInt32BE(written, at)
    at += 4 + written
  }
  return buf
}

/** `int8[]`: bigints or safe integers, nulls allowed. */
export function int8Array(values: ReadonlyArray<bigint | number | null | undefined>): Buffer {
  return fixedWidthArray(values, 'int8', 8, (buf, v, at) => buf.writeBigInt64BE(BigInt(v), at))
}

/** `int4[]`: 32-bit integers, nulls allowed. */
export function int4Array(values: ReadonlyArray<number | null | undefined>): Buffer {
  return fixedWidthArray(values, 'int4', 4, (buf, v, at) => buf.writeInt32BE(v, at))
}

/** `bool[]`, nulls allowed. */
export function boolArray(values: ReadonlyArray<boolean | null | undefined>): Buffer {
  return fixedWidthArray(values, 'bool', 1, (buf, v, at) => buf.writeUInt8(v ? 1 : 0, at))
}

/** `timestamptz[]` from Unix seconds (block timestamps). */
export function timestamptzArray(unixSeconds: ReadonlyArray<bigint>): Buffer {
  return fixedWidthArray(unixSeconds, 'timestamptz', 8, (buf, s, at) =>
    buf.writeBigInt64BE((s - PG_EPOCH_SECONDS) * 1_000_000n, at),
  )
}

function fixedWidthArray<T>(
  values: ReadonlyArray<T | null | undefined>,
  type: PgArrayType,
  width: number,
  write: (buf: Buffer, value: T, at: number) => void,
): Buffer {
  const buf = Buffer.allocUnsafe(HEADER_BYTES + values.length * (4 + width))
  let hasNull = false
  let at = HEADER_BYTES
  for (const v of values) {
    if (v === null || v === undefined) {
      hasNull = true
      at = buf.writeInt32BE(-1, at)
      continue
    }
    buf.writeInt32BE(width, at)
    write(buf, v, at + 4)
    at += 4 + width
  }
  writeHeader(buf, values.length, hasNull, type)
  return buf.subarray(0, at)
}

/** numeric's sign word of a negative value. */
const NUMERIC_NEGATIVE = 0x4000
const DECIMAL = /^-?[0-9]+$/

/**
 * `numeric[]` of integers (token ids up to 2^256 − 1, ERC-1155 amounts and
 * balance changes), given as decimal strings or bigints, nulls allowed. The
 * binary numeric is base-10000 digits, most significant first, with the
 * weight of the first; trailing zero digits are left out (as numeric_send
 * writes them).
 */
export function numericArray(values: ReadonlyArray<string | bigint | null | undefined>): Buffer {
  let hasNull = false
  const decimals = values.map((v) => {
    if (v === null || v === undefined) {
      hasNull = true
      return null
    }
    // A bigint's decimal form is always an integer: only strings need the check.
    if (typeof v === 'bigint') return v.toString()
    if (!DECIMAL.test(v)) throw new RangeError(`numericArray takes integers, not ${v}`)
    return v
  })
  // At most 8 header bytes and one 2-byte digit per 4 decimal digits, plus the length.
  let size = HEADER_BYTES
  for (const s of decimals) size += 4 + (s === null ? 0 : 8 + 2 * Math.ceil(s.length / 4))
  const buf = Buffer.allocUnsafe(size)
  let at = writeHeader(buf, decimals.length, hasNull, 'numeric')
  const digits: number[] = []
  for (const s of decimals) {
    if (s === null) {
      at = buf.writeInt32BE(-1, at)
      continue
    }
    const negative = s.charCodeAt(0) === 45 // '-'
    const start = negative ? 1 : 0
    digits.length = 0
    // Base-10000 digits from the right, so the first group holds the remainder.
    for (let end = s.length; end > start; end -= 4) {
      let digit = 0
      for (let i = Math.max(start, end - 4); i < end; i++) digit = digit * 10 + (s.charCodeAt(i) - 48)
      digits.push(digit)
    }
    while (digits.length > 0 && digits[digits.length - 1] === 0) digits.pop() // leading zeros
    const weight = digits.length - 1
    let trailing = 0
    while (trailing < digits.length && digits[trailing] === 0) trailing++
    const count = digits.length - trailing
    at = buf.writeInt32BE(8 + 2 * count, at)
    at = buf.writeInt16BE(count, at)
    at = buf.writeInt16BE(count === 0 ? 0 : weight, at)
    at = buf.writeUInt16BE(negative && count > 0 ? NUMERIC_NEGATIVE : 0, at)
    at = buf.writeInt16BE(0, at) // display scale: an integer
    for (let i = digits.length - 1; i >= trailing; i--) at = buf.writeInt16BE(digits[i]!, at)
  }
  return buf.subarray(0, at)
}
