import { describe, expect, it } from 'vitest'
import { extractEntities, fileEntityName, queryEntities } from './entities.js'

const names = (text: string, extra = {}) => extractEntities(text, extra).map((e) => `${e.type}:${e.name}`)

describe('extractEntities', () => {
  it('finds files, symbols, urls and tools in coding text', () => {
    expect(
      names('Edit src/middleware/auth.ts: add validateToken and rate_limit; see https://example.com/docs.', {
        tool: 'Edit',
        files: ['/repo/src/app.ts'],
      }),
    ).toEqual([
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
      'file:scripts/build.sh',
    ])
  })

  it('keeps the case of paths, and of a URL past its host', () => {
    expect(
      names('Fix src/Cart.ts and docs/API.md; see https://Example.COM/Docs/API', { files: ['/tmp/tmp.wc3XzOVkQr/src/Cart.ts'] }),
    ).toEqual([
      'file:/tmp/tmp.wc3XzOVkQr/src/Cart.ts',
      'url:https://example.com/Docs/API',
      // src/Cart.ts in the text is the document's own file (see below).
      'file:docs/API.md',
    ])
  })

  it('reads a relative path in the text that names one of the document’s own files as that file', () => {
    const root = '/repo'
    expect(names('Read: a.ts and ../src/a.ts and ./a.ts; also lib/b.ts', { files: ['/repo/src/a.ts'], projectRoot: root })).toEqual([
      'file:src/a.ts',
      'file:lib/b.ts',
    ])
  })

  it('names a file inside the project root relative to it, so the absolute, ./ and relative forms are one entity', () => {
    const root = '/tmp/tmp.wc3XzOVkQr'
    expect(
      names(`Read ${root}/src/Cart.ts, then ./src/Cart.ts and src/Cart.ts; also /etc/hosts`, {
        files: [`${root}/src/Cart.ts`],
        projectRoot: root,
      }),
    ).toEqual(['file:src/Cart.ts', 'file:/etc/hosts'])
    expect(fileEntityName(`${root}/`, root)).toBe(root)
    expect(fileEntityName(`${root}2/a.ts`, root)).toBe(`${root}2/a.ts`)
    expect(fileEntityName('src/a.ts', 'locomo:conv-26')).toBe('src/a.ts')
    // Doubled slashes and . / .. segments name the same file.
    for (const p of [
      `${root}/src//Cart.ts`,
      `${root}/src/../src/Cart.ts`,
      `${root}/./src/Cart.ts`,
      './src//Cart.ts',
      'src/lib/../Cart.ts',
    ]) {
      expect(fileEntityName(p, root), p).toBe('src/Cart.ts')
    }
    expect(fileEntityName('../shared/a.ts', root)).toBe('../shared/a.ts')
    expect(fileEntityName('/../etc/hosts', root)).toBe('/etc/hosts')
  })

  it('does not take arithmetic, word pairs or dates with a slash for files, but keeps path shapes', () => {
    expect(names('set ratio = pct/100 and a/b, and/or km/h on 12/05/2023 (1/2 done); TCP/IP').filter((n) => n.startsWith('file:'))).toEqual(
      [],
    )
    expect(
      names('see src/lib/utils, docker/Dockerfile, config/.env, ~/notes/todo.txt, /usr/local/bin, src/components/ and lib/v2/x.proto'),
    ).toEqual([
      'file:src/lib/utils',
      'file:docker/Dockerfile',
      'file:config/.env',
      'file:~/notes/todo.txt',
      'file:/usr/local/bin',
      'file:src/components',
      'file:lib/v2/x.proto',
    ])
  })

  it('takes no names from the capitalised words of a path', () => {
    expect(names('fix the total in src/Cart.ts and README.md with Sara')).toEqual(['file:src/Cart.ts', 'file:README.md', 'name:sara'])
  })

  it('does not take contractions with a straight apostrophe, or the redaction placeholder, for names', () => {
    expect(names("I'm sure I've said it: the key was [REDACTED:aws-access-key], ask Melanie.")).toEqual(['name:melanie'])
  })

  it('finds capitalised names and the speaker, but not grammar capitals or names someone is addressed by', () => {
    expect(
      names('Caroline: Yes! I moved from Sweden with Sara Bareilles in mind. Thanks, Melanie! Hi Tom.', { speaker: 'Caroline' }),
    ).toEqual(['name:caroline', 'name:sweden', 'name:sara bareilles'])
    expect(names('done', { speaker: 'assistant' })).toEqual([])
  })
  it('keeps acronyms and titles, and skips one capitalised word opening a sentence', () => {
    expect(names('We went to the LGBTQ center and read Becoming Nicole. Sweden is far.')).toEqual(['name:lgbtq', 'name:becoming nicole'])
  })
})

describe('queryEntities', () => {
  it('matches known names in any case', () => {
    expect(queryEntities('what did caroline say about sweden?', ['caroline', 'sweden', 'melanie']).map((e) => e.name)).toEqual([
      'caroline',
      'sweden',
    ])
  })
  it('names a path inside a searched project relative to its root, as capture does', () => {
    expect(
      queryEntities('who changed /home/me/app/src/Cart.ts', [], ['/home/me/app', '/home/me/other']).map((e) => `${e.type}:${e.name}`),
    ).toEqual(['file:/home/me/app/src/Cart.ts', 'file:src/Cart.ts'])
  })
})
