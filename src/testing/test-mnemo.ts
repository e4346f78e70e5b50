import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { createManualClock } from '../core/clock.js'
import { MnemoEngine } from '../engine/mnemo.js'
import { DEFAULT_RECALL_CONFIG, type RecallConfig } from '../engine/recall-pipeline.js'
import type { Embedder } from '../providers/embedder.js'
import { openSqliteStore } from '../storage/sqlite/sqlite-store.js'

/** 2025-06-14T10:00:00Z: the fixed start of every test clock. */
export const T0 = Date.parse('2025-06-14T10:00:00Z')

/** An engine on an in-memory store with a manual clock (time zone UTC), for tests. */
export function createTestEngine(
  options: {
    cwd?: string
    budget?: number
    recall?: RecallConfig
    embedder?: Embedder
    agentScope?: 'shared' | 'own'
    timeZone?: string
  } = {},
) {
  const clock = createManualClock(T0)
  const store = openSqliteStore({ path: ':memory:' }, () => clock.now())
  const engine = new MnemoEngine({
    store,
    clock,
    cwd: options.cwd ?? '/work/demo-app',
    contextBudgetTokens: options.budget ?? 2000,
    timeZone: options.timeZone ?? 'UTC',
    ...(options.recall ? { recall: options.recall } : {}),
    ...(options.embedder ? { embedder: options.embedder } : {}),
    ...(options.agentScope ? { agentScope: options.agentScope } : {}),
  })
  return { engine, clock, store }
}

/** The default recall configuration with some channel weights changed. */
export function recallWith(weights: Partial<RecallConfig['weights']>, rest: Partial<RecallConfig> = {}): RecallConfig {
  return { ...DEFAULT_RECALL_CONFIG, ...rest, weights: { ...DEFAULT_RECALL_CONFIG.weights, ...weights } }
}

/** A fresh temp folder, removed by the returned `cleanup`. */
export function tempDir(prefix = 'mnemo-test-'): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix))
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) }
}

/** A Claude Code hook payload as JSON text. */
export function hookPayload(event: string, fields: Record<string, unknown>, sessionId = 'sess-1', cwd = '/work/demo-app'): string {
  return JSON.stringify({ session_id: sessionId, transcript_path: `/tmp/${sessionId}.jsonl`, cwd, hook_event_name: event, ...fields })
}
