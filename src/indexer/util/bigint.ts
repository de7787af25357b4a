export const minBig = (a: bigint, b: bigint) => (a < b ? a : b)
export const maxBig = (a: bigint, b: bigint) => (a > b ? a : b)
