/**
 * Memoizes a function of a string key in a bounded map, emptied when full:
 * for per-request work whose keys repeat (a client's address, a path) but
 * whose key space is unbounded, so a stream of distinct keys costs no more
 * than computing each one.
 */
export function boundedMemo<V>(limit: number, compute: (key: string) => V): (key: string) => V {
  const memo = new Map<string, V>()
  return (key) => {
    let value = memo.get(key)
    if (value === undefined) {
      if (memo.size >= limit) memo.clear()
      value = compute(key)
      memo.set(key, value)
    }
    return value
  }
}
