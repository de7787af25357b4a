/** A record's confirmations as the API counts them: null is "unknown", not zero. */
export function Confirmations({ value, final = 12 }: { value: number | null; final?: number }) {
  if (value === null) return <span className="muted">confirmations unknown</span>
  return (
    <span className={`confirmations${value >= final ? ' final' : ''}`} data-testid="confirmations">
      {value.toLocaleString('en')} confirmation{value === 1 ? '' : 's'}
    </span>
  )
}
