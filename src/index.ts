/**
 * mnemo as a library: the same engine the CLI, hooks and MCP server use, in-process.
 *
 * @example
 * import { openMnemo } from 'mnemo'
 * const mnemo = openMnemo({ home: '/tmp/my-mnemo' })
 * mnemo.engine.remember('orders DB is PostgreSQL 14', { kind: 'fact' })
 * console.log(mnemo.engine.recall('orders database'))
 * mnemo.close()
 */
export { openMnemo, type OpenMnemoOptions, type OpenedMnemo } from './runtime/open-mnemo.js'
export { MnemoEngine, type RecallOptions, type ImportReport, type ImportFileReport, type ShowResult } from './engine/mnemo.js'
export { MnemoError, type ErrorCode, type ErrorDetails } from './core/errors.js'
export type { ContextBlock } from './context/context-block.js'
export type * from './core/types.js'
