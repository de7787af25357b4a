'use client'

import { useCallback, useState } from 'react'
import {
  type EndpointSpec,
  isCursorParam,
  type ParamErrors,
  type ParamValues,
  validateParams,
} from './endpoints'

/** The chosen endpoint, its parameter values and the errors of the last check. */
export function useRequestForm(endpoints: EndpointSpec[]) {
  const [selectedId, setSelectedId] = useState(
    endpoints.find((e) => e.path === '/v1/collections')?.id ?? endpoints[0]?.id,
  )
  const [values, setValues] = useState<ParamValues>({ limit: '5' })
  const [errors, setErrors] = useState<ParamErrors>({})
  const endpoint = endpoints.find((e) => e.id === selectedId)

  function select(next: EndpointSpec) {
    setSelectedId(next.id)
    setErrors({})
    // Keep values whose parameter means the same on the new endpoint (a contract address, limit …),
    // never cursors: they belong to one answer.
    setValues((current) => {
      const kept: ParamValues = {}
      for (const p of next.params) {
        const v = current[p.name]
        if (v && !isCursorParam(p.name) && endpoint && meaning(endpoint, p.name) === meaning(next, p.name))
          kept[p.name] = v
      }
      return kept
    })
  }

  /** A changed filter makes the cursor of the previous answer meaningless: it goes. */
  function setValue(name: string, value: string) {
    setValues((current) => {
      const kept = isCursorParam(name)
        ? current
        : Object.fromEntries(Object.entries(current).filter(([key]) => !isCursorParam(key)))
      return { ...kept, [name]: value }
    })
  }

  /** Fills the parameters that are still empty (live examples); typed values win. */
  const fillEmpty = useCallback((examples: ParamValues) => {
    setValues((current) => {
      const empty = Object.entries(examples).filter(([name]) => !current[name])
      return empty.length === 0 ? current : { ...current, ...Object.fromEntries(empty) }
    })
  }, [])

  /** The API's own checks, shown: the name of the first parameter the API would refuse, if any. */
  function check(target: EndpointSpec, params: ParamValues): string | undefined {
    const found = validateParams(target, params)
    setErrors(found)
    return target.params.find((p) => found[p.name])?.name
  }

  return { endpoint, selectedId, values, setValues, setValue, fillEmpty, errors, select, check }
}

/** `address` is an owner's under /v1/owners/ and a contract's everywhere else. */
function meaning(endpoint: EndpointSpec, param: string): string {
  return param === 'address' && endpoint.path.startsWith('/v1/owners/') ? 'owner address' : param
}
