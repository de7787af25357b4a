/** `node --import EXIT_WITH_PARENT …`: the process stops when its parent is gone (./exit-with-parent.mjs). */
import path from 'node:path'
import { pathToFileURL } from 'node:url'

export const EXIT_WITH_PARENT = pathToFileURL(path.join(import.meta.dirname, 'exit-with-parent.mjs')).href
