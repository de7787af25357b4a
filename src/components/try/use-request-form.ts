'use client'

import { useCallback, useState } from 'react'
import { type EndpointSpec, type ParamErrors, type ParamValues, validateParams } from './endpoints'

/** Cursor parameters belong to one answer: they are never carried to another endpoint. */
const CURSOR = /^(before_|after_)/

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
    // Keep values whose parameter the new endpoint also has (address, limit …), never cursors.
    setValues((current) => {
      const kept: ParamValues = {}
      for (const p of next.params) {
        const v = current[p.name]
        if (v && !CURSOR.test(p.name)) kept[p.name] = v
      }
      return kept
    })
  }

  function setValue(name: string, value: string) {
    setValues((current) => ({ ...current, [name]: value }))
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
