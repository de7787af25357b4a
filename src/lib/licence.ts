/**
 * Where the API's licence is stated: the guide's Licence section, which the
 * OpenAPI document's `info.license` links to (docs/api.md, "`info`").
 */
export const LICENCE_SECTION_ID = 'licence'
export const LICENCE_NAME = 'Proprietary'
