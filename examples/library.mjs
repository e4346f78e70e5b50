// mnemo as a library, in-process. Run: npm run build && node examples/library.mjs
// Uses a throw-away data directory; prints what it recalls and the context block.
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { openMnemo } from 'mnemo'

const home = mkdtempSync(path.join(os.tmpdir(), 'mnemo-example-'))
const mnemo = openMnemo({ home, cwd: '/work/acme-api' })
try {
  const { engine } = mnemo
  await engine.remember('orders DB is PostgreSQL 14', { kind: 'fact' })
  await engine.remember('orders DB migrated to MySQL 8', { kind: 'fact' })
  await engine.captureHook(
    'UserPromptSubmit',
    JSON.stringify({ session_id: 's1', cwd: '/work/acme-api', prompt: 'add rate limiting to the orders API' }),
  )

  const hits = await engine.recall('which database do orders use?', { limit: 3 })
  for (const hit of hits) console.log(`${hit.kind.padEnd(7)} ${hit.snippet}`)
  const fact = hits.find((h) => h.type === 'memory')
  if (fact) console.log((await engine.history(fact.id)).map((m) => `${m.text} (${m.validTo ? 'superseded' : 'current'})`).join('\n'))
  console.log((await engine.context({ budgetTokens: 400 })).text)
} finally {
  await mnemo.close()
  rmSync(home, { recursive: true, force: true })
}
