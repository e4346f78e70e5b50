/**
 * mnemo as a library: the same engine the CLI, hooks and MCP server use, in-process. What it exports is listed in the
 * README ("As a library"); `src/index.test.ts` keeps the two equal and this entry free of the surfaces' code.
 *
 * @example
 * import { openMnemo } from 'mnemo'
 * const mnemo = openMnemo() // data in MNEMO_HOME, else ~/.mnemo; the project is the working directory's
 * try {
 *   await mnemo.engine.remember('orders DB is PostgreSQL 14', { kind: 'fact' })
 *   const [hit] = await mnemo.engine.recall('which database do orders use?', { limit: 1 })
 *   console.log(hit?.kind, hit?.snippet) // → fact orders DB is PostgreSQL 14
 * } finally {
 *   await mnemo.close()
 * }
 */
export { openMnemo, type OpenMnemoOptions, type OpenedMnemo } from './runtime/open-mnemo.js'
export {
  MnemoEngine,
  type RecallHits,
  type RecallOptions,
  type ImportReport,
  type ImportFileReport,
  type ShowResult,
} from './engine/mnemo.js'
export { MnemoError, type ErrorCode, type ErrorDetails } from './core/errors.js'
export type {
  AgentName,
  ChannelName,
  ContextBlock,
  DerivedObservation,
  EntityRef,
  EntityType,
  EventFormat,
  EventInput,
  HookAgent,
  IndexedText,
  Memory,
  MemoryKind,
  MemoryTier,
  Observation,
  ObservationKind,
  Project,
  ProjectRef,
  RecallHit,
  Session,
  SessionEffect,
  StepPart,
} from './core/types.js'
export { EngineFacts, DEFAULT_FACT_LIMITS, type FactWriteOptions, type FactWriteResult, type FactShowResult } from './engine/facts.js'
export {
  parseFactQuery,
  type FactQuery,
  type Cond as FactCond,
  type Verb as FactVerb,
  type Period as FactPeriod,
} from './core/facts/fact-query.js'
export { answerValueText, type FactAnswer } from './core/facts/fact-answer.js'
export { FACT_QUERY_GRAMMAR } from './core/facts/fact-inputs.js'
export type {
  CollectionInfo,
  CollectionSpec,
  FieldSpec,
  FieldType,
  FactRecord,
  FactVersion,
  FactStatus,
  FactProvenance,
  FactValue,
  FactValues,
} from './core/facts/fact-types.js'
