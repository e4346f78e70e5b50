import { describe, expect, it } from 'vitest'
import { extractEntities, queryEntities } from './entities.js'

const names = (text: string, extra = {}) => extractEntities(text, extra).map((e) => `${e.type}:${e.name}`)

describe('extractEntities', () => {
  it('finds files, symbols, urls and tools in coding text', () => {
    expect(names('Edit src/middleware/auth.ts: add validateToken and rate_limit; see https://example.com/docs.', { tool: 'Edit', files: ['/repo/src/app.ts'] })).toEqual([
      'file:/repo/src/app.ts',
      'url:https://example.com/docs',
      'file:src/middleware/auth.ts',
      'tool:edit',
      'symbol:validatetoken',
      'symbol:rate_limit',
    ])
  })
  it('drops the full stop after a path that ends a sentence, and the slash-dot after a folder', () => {
    expect(names('Tests are in test/orders.test.ts. Put it in src/middleware/. Then run ./scripts/build.sh.')).toEqual([
      'file:test/orders.test.ts',
      'file:src/middleware',
      'file:./scripts/build.sh',
    ])
  })

  it('does not take contractions with a straight apostrophe, or the redaction placeholder, for names', () => {
    expect(names("I'm sure I've said it: the key was [REDACTED:aws-access-key], ask Melanie.")).toEqual(['name:melanie'])
  })

  it('finds capitalised names and the speaker, but not grammar capitals or names someone is addressed by', () => {
    expect(names('Caroline: Yes! I moved from Sweden with Sara Bareilles in mind. Thanks, Melanie! Hi Tom.', { speaker: 'Caroline' })).toEqual([
      'name:caroline',
      'name:sweden',
      'name:sara bareilles',
    ])
    expect(names('done', { speaker: 'assistant' })).toEqual([])
  })
  it('keeps acronyms and titles, and skips one capitalised word opening a sentence', () => {
    expect(names('We went to the LGBTQ center and read Becoming Nicole. Sweden is far.')).toEqual(['name:lgbtq', 'name:becoming nicole'])
  })
})

describe('queryEntities', () => {
  it('matches known names in any case', () => {
    expect(queryEntities('what did caroline say about sweden?', ['caroline', 'sweden', 'melanie']).map((e) => e.name)).toEqual(['caroline', 'sweden'])
  })
})
