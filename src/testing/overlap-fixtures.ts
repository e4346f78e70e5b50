/**
 * Two teams' worth of overlapping text for isolation tests (projects in
 * scope.test.ts, users in user-scope.test.ts): the same words, file names and
 * identifier (validateToken) and one identical memory, but different facts,
 * so every leak shows up as a word only the other side wrote.
 */

/** One side's facts. `root` is where its files live, `key` names its tool calls. */
export interface OverlapFacts {
  root: string
  key: string
  session: string
  db: string
  idp: string
  port: number
  region: string
  owner: string
}

/** The first side's facts and the words only its texts contain. */
export const FIRST = { db: 'PostgreSQL 14', idp: 'Auth0', port: 5432, region: 'Frankfurt', owner: 'Dana' } as const
export const FIRST_ONLY = ['PostgreSQL', 'Auth0', 'Frankfurt', 'Dana', '5432']
/** The second side's facts and the words only its texts contain. */
export const SECOND = { db: 'MySQL 8', idp: 'Okta', port: 3306, region: 'Oregon', owner: 'Eli' } as const
export const SECOND_ONLY = ['MySQL', 'Okta', 'Oregon', 'Eli', '3306']

/** The same text remembered by both sides. */
export const SAME_MEMORY = 'use feature flags for risky orders database changes'

/**
 * Memories with distinct subjects (the write guard would merge or supersede
 * same-subject facts of one side). Index 1 and 7 mention checkIssuer, 5 and 9
 * the region, 10 is `SAME_MEMORY`.
 */
export const memoriesOf = (f: OverlapFacts): string[] => [
  `orders database engine is ${f.db}`,
  `checkIssuer accepts tokens issued by ${f.idp}`,
  `the orders database listens on port ${f.port}`,
  `primary region for the orders database: ${f.region}`,
  `on-call owner of the orders database: ${f.owner}`,
  `nightly backup of the orders database runs at 02:00 in ${f.region}`,
  `connection pool for ${f.db} holds 20 connections`,
  `token cache for checkIssuer keeps ${f.idp} keys for 10 minutes`,
  `deploys of the orders service wait for ${f.db} migrations`,
  `the billing service reads the orders database through a replica in ${f.region}`,
  SAME_MEMORY,
]

/** One Claude Code session: a prompt, a failing test, an edit, the test passing, a reply, the end. */
export const hooksOf = (f: OverlapFacts): [string, Record<string, unknown>][] => [
  ['UserPromptSubmit', { prompt: `move the orders database connection pool to ${f.db} and keep validateToken checking ${f.idp} tokens` }],
  [
    'PostToolUseFailure',
    {
      tool_name: 'Bash',
      tool_use_id: `fail-${f.key}`,
      tool_input: { command: 'npm test -- orders-database' },
      error: `orders database tests failed: ${f.db} refused the connection on port ${f.port}`,
    },
  ],
  [
    'PostToolUse',
    {
      tool_name: 'Edit',
      tool_use_id: `edit-${f.key}`,
      tool_input: {
        file_path: `${f.root}/src/auth/validate-token.ts`,
        old_string: 'issuer: TODO',
        new_string: `issuer: '${f.idp}' // validateToken`,
      },
      tool_response: 'The file has been updated.',
    },
  ],
  [
    'PostToolUse',
    {
      tool_name: 'Bash',
      tool_use_id: `bash-${f.key}`,
      tool_input: { command: 'npm test -- orders-database' },
      tool_response: { stdout: `orders database tests passed against ${f.db} on port ${f.port}` },
    },
  ],
  [
    'Stop',
    {
      last_assistant_message: `The orders database connection pool now uses ${f.db} in ${f.region}; validateToken accepts ${f.idp} tokens.`,
    },
  ],
  ['SessionEnd', {}],
]
