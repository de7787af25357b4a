import type { ParamSpec } from './endpoints'
import { InlineCode } from './inline-code'

function placeholderFor(name: string): string | undefined {
  if (name === 'address' || name === 'collection' || name === 'after_collection') return '0x… (lowercase)'
  if (name === 'tokenId' || name === 'after_token_id') return 'e.g. 1'
  if (name === 'limit') return '20'
  if (name === 'search') return 'name or symbol'
  return undefined
}

/**
 * One parameter: label with where it goes and its type, an input (a select for
 * enums and booleans), the document's description and the error of the last check.
 */
export function ParamField({
  param,
  inputId,
  value,
  error,
  onChange,
}: {
  param: ParamSpec
  inputId: string
  value: string
  error: string | undefined
  onChange: (value: string) => void
}) {
  const describedBy = [param.description ? `${inputId}-help` : '', error ? `${inputId}-err` : '']
    .filter(Boolean)
    .join(' ')
  const common = {
    id: inputId,
    name: param.name,
    value,
    'aria-invalid': error ? true : undefined,
    'aria-describedby': describedBy || undefined,
    'aria-required': param.required || undefined,
  }
  return (
    <div className="field param-field">
      <label htmlFor={inputId}>
        <span className="param-name">
          {param.name}
          {param.required ? (
            <span className="required" aria-hidden="true">
              *
            </span>
          ) : null}
        </span>
        <span className="help param-meta">
          {param.in} · {param.type}
        </span>
      </label>
      {param.enum || param.type === 'boolean' ? (
        <select {...common} onChange={(e) => onChange(e.target.value)}>
          <option value="">(not sent)</option>
          {(param.enum ?? ['true', 'false']).map((o) => (
            <option key={o} value={o}>
              {o}
            </option>
          ))}
        </select>
      ) : (
        <input
          {...common}
          inputMode={param.type === 'integer' ? 'numeric' : undefined}
          spellCheck={false}
          autoComplete="off"
          placeholder={placeholderFor(param.name)}
          onChange={(e) => onChange(e.target.value)}
        />
      )}
      {param.description ? (
        <p id={`${inputId}-help`} className="help" data-testid="param-description">
          <InlineCode text={param.description} />
        </p>
      ) : (
        <span />
      )}
      {error ? (
        <p id={`${inputId}-err`} className="field-error">
          {param.name} {error}
        </p>
      ) : (
        <span />
      )}
    </div>
  )
}
