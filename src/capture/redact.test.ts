import { describe, expect, it } from 'vitest'
import { findSecrets, redactSecrets, redactValue, redactWith } from './redact.js'
import { type Redactor, sanitizePayload } from './sanitize.js'
import { SECRET_KEY_END, secretKeyType } from './secret-keys.js'
import { isPlaceholderValue, SECRET_PATTERNS, type SecretPattern } from './secret-patterns.js'

// Fake credentials are assembled at run time so no scanner mistakes this file for a leak.
const cat = (...parts: string[]): string => parts.join('')
const AWS_ID = cat('AKIA', 'IOSFODNN7EXAMPLE')
const AWS_SECRET = cat('wJalrXUtnFEMI/K7MDENG/', 'bPxRfiCYEXAMPLEKEY')
const GCP_KEY = cat('AIza', 'SyD3xAmPlE0123456789abcdefghijklmno') // AIza + 35
const ANTHROPIC = cat('sk-', 'ant-api03-', 'Xy9_kLm3-Pq7RsT2uVw5Zab8cDe1FgH4')
const OPENAI_PROJ = cat('sk-', 'proj-', 'Ab3De5Gh7Jk9_Mn1Pq3-St5Vw7Yz9Bc1')
const OPENAI_LEGACY = cat('sk-', 'Ab3De5Gh7Jk9Mn1Pq3St5Vw7Yz9Bc1Df3Gh5Jk7Lm9Np1')
const GHP = cat('gh', 'p_', 'aB3dE5fG7h'.repeat(3), 'J1k2L3')
const GHS = cat('gh', 's_', 'Zz9yX8wV7u'.repeat(3), 'T6s5R4')
const GH_PAT = cat('github', '_pat_', '11ABCDEFG0', '123456789_', 'aBcDeFgHiJkLmNoPqRsTuVwXyZ012345')
const GLPAT = cat('gl', 'pat-', 'xY7zAb3Cd5Ef9Gh1Jk2L')
const SLACK_BOT = cat('xo', 'xb-', '123456789012-', '1234567890123-', 'AbCdEfGhIjKlMnOpQrStUvWx')
const SLACK_HOOK_PATH = cat('T00000000/', 'B00000000/', 'XXXXXXXXXXXXXXXXXXXXXXXX')
const STRIPE_LIVE = cat('sk', '_live_', '4eC39HqLyjWDarjtT1zdp7dc')
const STRIPE_TEST = cat('sk', '_test_', '4eC39HqLyjWDarjtT1zdp7dc')
const STRIPE_RK = cat('rk', '_live_', '51Hb2cDe3Fg4Hi5Jk6Lm')
const NPM = cat('np', 'm_', 'a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8')
const TWILIO = cat('S', 'K', '0123456789abcdef0123456789abcdef')
const SENDGRID = cat('S', 'G.', 'ngeVfQFYQlKU0ufo8x5d1A', '.', 'TwL2iGABf9DHoTf-09kqeF8tAmbihYzrnopKc-1s5cr')
const JWT = cat(
  'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9',
  '.',
  'eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkphbmUifQ',
  '.',
  'SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c',
)
const AZURE_KEY = cat('Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsu', 'Fq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==')
const PEM_BODY =
  'MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\nVJTUt9Us8cKjMzEfYyjiWA4R4/M2bS1GB4t7NXp98C3SC6dVMvDuictGeurT8jNbvJZH'
const PEM = cat('-----BEGIN ', 'PRIVATE KEY-----\n', PEM_BODY, '\n-----END ', 'PRIVATE KEY-----')

interface Hit {
  input: string
  output: string
}

/** For every table entry: inputs it redacts (exact output, alone and in the full pipeline) and look-alikes it must leave alone. */
const CASES: Record<string, { hits: Hit[]; misses: string[] }> = {
  'gcp-service-account-key': {
    hits: [
      {
        input: `{"type": "service_account", "private_key_id": "1f2e", "private_key": "${PEM.replaceAll('\n', '\\n')}\\n", "client_email": "bot@proj.iam.gserviceaccount.com"}`,
        output:
          '{"type": "service_account", "private_key_id": "1f2e", "private_key": "[REDACTED:gcp-service-account-key]", "client_email": "bot@proj.iam.gserviceaccount.com"}',
      },
    ],
    misses: [`{"kind": "tls", "private_key": "${PEM.replaceAll('\n', '\\n')}"}`, '{"type": "service_account", "private_key": ""}'],
  },
  'private-key': {
    hits: [
      { input: `key:\n${PEM}\nnext line`, output: 'key:\n[REDACTED:private-key]\nnext line' },
      {
        input: cat(
          '-----BEGIN RSA ',
          'PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,3F17F5316E2BAC89\n\nxPqZ9Lm3Kv8Tn2Ry5Wd1Bc7\n-----END RSA ',
          'PRIVATE KEY-----',
        ),
        output: '[REDACTED:private-key]',
      },
      {
        input: cat('-----BEGIN OPENSSH ', 'PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\nAAAA (output cut)'),
        output: '[REDACTED:private-key] (output cut)',
      },
    ],
    misses: [
      "if (pem.startsWith('-----BEGIN PRIVATE KEY-----')) return parse(pem) // until '-----END PRIVATE KEY-----'",
      '-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAu1SU1LfVLPHCozMxH2Mo\n-----END PUBLIC KEY-----',
      '-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIEAgAAuTANBgkqhkiG9w0BAQUFADBaMQswCQYDVQQGEwJJ\n-----END CERTIFICATE-----',
    ],
  },
  'aws-access-key': {
    hits: [
      { input: `aws_access_key_id = ${AWS_ID}`, output: 'aws_access_key_id = [REDACTED:aws-access-key]' },
      { input: `"AccessKeyId": "${cat('ASIA', 'Y34FZKBOKMUTVV7A')}",`, output: '"AccessKeyId": "[REDACTED:aws-access-key]",' },
    ],
    misses: [`${AWS_ID}XYZ`, `MY${AWS_ID}`, 'AKIA is the prefix of long-term keys'],
  },
  'aws-secret-key': {
    hits: [
      { input: `aws_secret_access_key = ${AWS_SECRET}`, output: 'aws_secret_access_key = [REDACTED:aws-secret-key]' },
      { input: `"SecretAccessKey": "${AWS_SECRET}"`, output: '"SecretAccessKey": "[REDACTED:aws-secret-key]"' },
    ],
    misses: [`checksum ${AWS_SECRET}`, 'aws_secret_access_key = tooshort'],
  },
  'gcp-api-key': {
    hits: [
      {
        input: `https://maps.googleapis.com/api?key=${GCP_KEY}&q=1`,
        output: 'https://maps.googleapis.com/api?key=[REDACTED:gcp-api-key]&q=1',
      },
    ],
    misses: ['AIzaShort', `${GCP_KEY}abc`],
  },
  'azure-storage-key': {
    hits: [
      {
        input: `DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=${AZURE_KEY};EndpointSuffix=core.windows.net`,
        output: 'DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=[REDACTED:azure-storage-key];EndpointSuffix=core.windows.net',
      },
    ],
    misses: ['AccountKey=<your-account-key>', 'AccountKey=short'],
  },
  'azure-sas-token': {
    hits: [
      {
        input: 'https://acct.blob.core.windows.net/c/f.txt?sv=2022-11-02&sp=r&sig=Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4%2Bab%3D&se=2030-01-01',
        output: 'https://acct.blob.core.windows.net/c/f.txt?sv=2022-11-02&sp=r&sig=[REDACTED:azure-sas-token]&se=2030-01-01',
      },
    ],
    misses: ['https://example.com/?sig=abc', 'signature sig=Zm9vYmFyYmF6cXV4Zm9vYmFy'],
  },
  'anthropic-api-key': {
    hits: [{ input: `ANTHROPIC_API_KEY=${ANTHROPIC}`, output: 'ANTHROPIC_API_KEY=[REDACTED:anthropic-api-key]' }],
    misses: ['sk-ant-short', 'desk-ant-api03-aaaaaaaaaaaaaaaaaaaaaaaa'],
  },
  'openai-api-key': {
    hits: [
      { input: `client = OpenAI(api_key="${OPENAI_PROJ}")`, output: 'client = OpenAI(api_key="[REDACTED:openai-api-key]")' },
      { input: `key ${OPENAI_LEGACY} ok`, output: 'key [REDACTED:openai-api-key] ok' },
    ],
    misses: [
      'pip install sk-learn',
      '<div class="sk-loading-spinner-container-wrapper">',
      'risk-assessment-document-template-v2',
      'sk-abcdefghijklmnopqrstuvwxyz',
    ],
  },
  'github-token': {
    hits: [
      {
        input: `git remote set-url origin https://${GHP}@github.com/o/r.git`,
        output: 'git remote set-url origin https://[REDACTED:github-token]@github.com/o/r.git',
      },
      { input: `Authorization: token ${GHS}`, output: 'Authorization: token [REDACTED:github-token]' },
      { input: `GH_TOKEN=${GH_PAT}`, output: 'GH_TOKEN=[REDACTED:github-token]' },
    ],
    misses: ['ghp_short', 'the ghp_ prefix marks classic tokens', `x${GHP}`],
  },
  'gitlab-token': {
    hits: [{ input: `export GITLAB_TOKEN='${GLPAT}'`, output: "export GITLAB_TOKEN='[REDACTED:gitlab-token]'" }],
    misses: ['glpat-short', 'see the glpat- prefix docs'],
  },
  'slack-webhook': {
    hits: [
      {
        input: `curl -X POST https://hooks.slack.com/services/${SLACK_HOOK_PATH} -d '{}'`,
        output: "curl -X POST https://hooks.slack.com/services/[REDACTED:slack-webhook] -d '{}'",
      },
    ],
    misses: ['https://hooks.slack.com/services/', 'https://api.slack.com/messaging/webhooks'],
  },
  'slack-token': {
    hits: [{ input: `SLACK_BOT=${SLACK_BOT}`, output: 'SLACK_BOT=[REDACTED:slack-token]' }],
    misses: ['xoxb-123', 'token types: xoxb-, xoxp-, xoxa-'],
  },
  'stripe-key': {
    hits: [
      { input: `Stripe.api_key = '${STRIPE_LIVE}'`, output: "Stripe.api_key = '[REDACTED:stripe-key]'" },
      { input: `test ${STRIPE_TEST} and ${STRIPE_RK}`, output: 'test [REDACTED:stripe-key] and [REDACTED:stripe-key]' },
    ],
    misses: [cat('pk', '_live_', '4eC39HqLyjWDarjtT1zdp7dc'), 'sk_live_', 'ask_live_questions_here'],
  },
  'npm-token': {
    hits: [{ input: `//registry.npmjs.org/:_authToken=${NPM}`, output: '//registry.npmjs.org/:_authToken=[REDACTED:npm-token]' }],
    misses: ['npm_config_registry=https://registry.npmjs.org/', 'npm_package_version=1.2.3'],
  },
  'twilio-api-key': {
    hits: [{ input: `twilio api key ${TWILIO}`, output: 'twilio api key [REDACTED:twilio-api-key]' }],
    misses: ['SKU0123456789abcdef0123456789abcdef', 'TASK0123456789abcdef0123456789abcdef', 'SK0123456789abcdef'],
  },
  'sendgrid-api-key': {
    hits: [{ input: `SENDGRID=${SENDGRID}`, output: 'SENDGRID=[REDACTED:sendgrid-api-key]' }],
    misses: ['SG.foo.bar', 'Singapore SG.'],
  },
  jwt: {
    hits: [
      { input: `session=${JWT}; Path=/`, output: 'session=[REDACTED:jwt]; Path=/' },
      { input: `Authorization: Bearer ${JWT}`, output: 'Authorization: Bearer [REDACTED:jwt]' },
    ],
    misses: ['eyJ.short.x', 'eyJhbGciOiJIUzI1NiJ9 alone'],
  },
  'authorization-header': {
    hits: [
      { input: 'Authorization: Bearer abcDEF123456ghiJKL', output: 'Authorization: Bearer [REDACTED:bearer-token]' },
      {
        input: 'curl -H "Authorization: Basic dXNlcjpodW50ZXIy" https://x.io',
        output: 'curl -H "Authorization: Basic [REDACTED:basic-auth]" https://x.io',
      },
      { input: '{"Authorization": "Bearer 0123456789abcdef"}', output: '{"Authorization": "Bearer [REDACTED:bearer-token]"}' },
    ],
    misses: [
      'curl -H "Authorization: Bearer $TOKEN" https://x.io',
      'Authorization: Bearer <token>',
      'headers: { Authorization: `Bearer ${token}` }',
      'the Authorization: Bearer header',
    ],
  },
  'bearer-token': {
    hits: [{ input: 'use Bearer Zm9vYmFyMTIzNDU2Nzg5MGFiY2Rl for it', output: 'use Bearer [REDACTED:bearer-token] for it' }],
    misses: ['Bearer tokens expire after an hour', 'Bearer authentication_is_described_in_rfc'],
  },
  'hand-made-placeholder': {
    hits: [
      { input: 'deploy key [REDACTED:sk_live_abcdefghijklmnopqrstuvwx] here', output: 'deploy key [REDACTED:secret] here' },
      { input: 'DB_PASSWORD=[REDACTED:hunter2]', output: 'DB_PASSWORD=[REDACTED:secret]' },
    ],
    misses: ['[REDACTED:api-key]', '[REDACTED:password] and [REDACTED]', '[PRIVATE]', '[REDACTED: spaced out]'],
  },
  'url-password': {
    hits: [
      {
        input: 'DATABASE_URL=postgres://app:hunter2@db.internal:5432/app',
        output: 'DATABASE_URL=postgres://app:[REDACTED:url-password]@db.internal:5432/app',
      },
      { input: 'redis://:s3cr3t@cache:6379/0', output: 'redis://:[REDACTED:url-password]@cache:6379/0' },
    ],
    misses: [
      'https://example.com:8080/path?email=a@b.com',
      'postgres://app:${PGPASSWORD}@db/app',
      'postgres://user:password@localhost/db',
      'git@github.com:org/repo.git',
      'https://user@host.example/path',
    ],
  },
  'curl-user': {
    hits: [{ input: 'curl -s -u admin:Tr0ub4dor https://api.x.io/v1', output: 'curl -s -u admin:[REDACTED:password] https://api.x.io/v1' }],
    misses: ['curl -u "$USER:$PASS" https://api.x.io', 'docker run -u 1000:1000 image', 'curl -u admin https://x.io'],
  },
  'keyed-quoted': {
    hits: [
      { input: '{"user": "bob", "password": "hunter2"}', output: '{"user": "bob", "password": "[REDACTED:password]"}' },
      { input: "const apiKey = 'k-123456'", output: "const apiKey = '[REDACTED:api-key]'" },
      { input: 'export DB_PASSWORD="p@ss w0rd"', output: 'export DB_PASSWORD="[REDACTED:password]"' },
      { input: 'client_secret: "abc\\"def"', output: 'client_secret: "[REDACTED:secret]"' },
      { input: "api_key: str = 'abc123'", output: "api_key: str = '[REDACTED:api-key]'" },
      { input: "os.environ['SECRET_KEY'] = 'xyz789'", output: "os.environ['SECRET_KEY'] = '[REDACTED:secret]'" },
      { input: 'password := "gopher1"', output: 'password := "[REDACTED:password]"' },
      { input: "'auth_token' => 'phpTok3n'", output: "'auth_token' => '[REDACTED:token]'" },
    ],
    misses: [
      '{"password": ""}',
      '{"token_type": "bearer", "max_tokens": "1024", "author": "Jane"}',
      'const token = getToken()',
      'if (password === "") return',
      '{"next_page_token": "CAEQAA"}',
      'password: "${DB_PASSWORD}"',
      '{"password": "<your-password>"}',
      'api_key: "YOUR_API_KEY"',
      'token: "********"',
      "private_key: '/home/me/.ssh/id_ed25519'",
    ],
  },
  'keyed-env': {
    hits: [
      { input: 'DB_HOST=localhost\nDB_PASSWORD=hunter2\nDEBUG=1', output: 'DB_HOST=localhost\nDB_PASSWORD=[REDACTED:password]\nDEBUG=1' },
      { input: 'https://x.io/cb?access_token=abcDEF123&state=xyz', output: 'https://x.io/cb?access_token=[REDACTED:token]&state=xyz' },
      { input: 'MYSQL_PWD=r00t; mysql -h db', output: 'MYSQL_PWD=[REDACTED:password]; mysql -h db' },
    ],
    misses: [
      'DB_PASSWORD=${DB_PASSWORD}',
      'f(token=token, retries=3)',
      'Client(api_key=api_key)',
      'PASSWORD_MIN_LENGTH=8',
      'TOKEN_FILE=/run/secrets/token',
      'API_KEY=',
    ],
  },
  'keyed-ini': {
    hits: [{ input: '[client]\nuser = root\npassword = hunter2\n', output: '[client]\nuser = root\npassword = [REDACTED:password]\n' }],
    misses: ['  token = some_var', '    password = userInput', 'password = None', 'const token = getToken()'],
  },
  'keyed-colon': {
    hits: [
      {
        input: 'db:\n  user: app\n  password: s3cret! # rotated\n',
        output: 'db:\n  user: app\n  password: [REDACTED:password] # rotated\n',
      },
      { input: 'curl -H "X-Api-Key: 9f8e7d6c" https://api.x.io', output: 'curl -H "X-Api-Key: [REDACTED:api-key]" https://api.x.io' },
    ],
    misses: [
      'password: ********',
      'interface A {\n  token: string;\n  password?: string\n}',
      'Password: reset it via the link below',
      'token: getToken(),',
      'secret: process.env.SECRET',
      'password: |',
    ],
  },
  'keyed-cli': {
    hits: [
      { input: 'mysql -u root --password hunter2 app', output: 'mysql -u root --password [REDACTED:password] app' },
      { input: 'tool --token=abc --api-key "k 9"', output: 'tool --token=[REDACTED:token] --api-key "[REDACTED:api-key]"' },
    ],
    misses: [
      'docker login --password-stdin',
      'use the --token flag',
      'mysql -phunter2',
      'tool --token --verbose',
      'tool --no-password run',
    ],
  },
  'prose-secret': {
    hits: [
      { input: 'the staging password is Hunter2-xyz', output: 'the staging password is [REDACTED:password]' },
      { input: 'FYI my GitHub token was abcDEF123456xyz, rotate it', output: 'FYI my GitHub token was [REDACTED:token], rotate it' },
      { input: 'the API key for prod: k3yk3yk3y', output: 'the API key for prod: [REDACTED:api-key]' },
      { input: 'the PIN is 4821.', output: 'the PIN is [REDACTED:pin].' },
      { input: 'password changed to S3cret! yesterday', output: 'password changed to [REDACTED:password]! yesterday' },
      { input: 'The passphrase is "correct horse"', output: 'The passphrase is "[REDACTED:password]"' },
      { input: 'our db password is `p@ss1234`.', output: 'our db password is `[REDACTED:password]`.' },
      { input: 'the password for the staging db is Tr0ub4dor&3 now', output: 'the password for the staging db is [REDACTED:password] now' },
      { input: 'The secret was: swordfish123', output: 'The secret was: [REDACTED:secret]' },
      { input: 'the password is 12345678', output: 'the password is [REDACTED:password]' },
    ],
    misses: [
      'the password field is required',
      'token count is 5',
      'reset your password',
      'reset your password at https://x.io',
      'the password is required',
      'the password is incorrect.',
      'the token is expired',
      'the secret is to cache the cart',
      'max tokens is 4096',
      'the token is 4096',
      'the token is 5 characters long',
      'the password is at least 8 characters',
      'passwords are hashed with bcrypt',
      'the pin is 12',
      'the API key is in the vault',
      'the password is stored in ~/.config/app/secret.txt',
      'the token is process.env.GITHUB_TOKEN',
      'the password is <your-password>',
    ],
  },
}

describe('SECRET_PATTERNS table', () => {
  it('documents every entry and compiles global, indexed regexes', () => {
    const ids = SECRET_PATTERNS.map((p) => p.id)
    expect(new Set(ids).size).toBe(ids.length)
    for (const p of SECRET_PATTERNS) {
      expect(p.description.length, p.id).toBeGreaterThan(20)
      expect(p.reference.length, p.id).toBeGreaterThan(5)
      expect(p.regex.flags, p.id).toContain('g')
      expect(p.regex.flags, p.id).toContain('d')
      expect(p.type, p.id).toMatch(/^[a-z0-9-]+$/)
    }
  })

  it('has cases for every entry, and no cases for unknown entries', () => {
    expect(Object.keys(CASES).sort()).toEqual(SECRET_PATTERNS.map((p) => p.id).sort())
    for (const [id, c] of Object.entries(CASES)) {
      expect(c.hits.length, id).toBeGreaterThan(0)
      expect(c.misses.length, id).toBeGreaterThan(0)
    }
  })

  const byId = new Map<string, SecretPattern>(SECRET_PATTERNS.map((p) => [p.id, p]))
  for (const [id, c] of Object.entries(CASES)) {
    describe(id, () => {
      const entry = (): SecretPattern => {
        const p = byId.get(id)
        if (!p) throw new Error(`no entry ${id}`)
        return p
      }
      it.each(c.hits)('redacts %#', ({ input, output }) => {
        expect(redactWith(input, [entry()])).toBe(output)
        expect(redactSecrets(input)).toBe(output)
        expect(redactSecrets(output)).toBe(output)
      })
      it.each(c.misses.map((m) => [m]))('leaves alone %s', (miss) => {
        expect(redactWith(miss, [entry()])).toBe(miss)
      })
    })
  }
})

describe('redactSecrets', () => {
  it('keeps ordinary text exactly as it is', () => {
    const clean = [
      'Reset your password from the account page; the password must be 12+ characters.',
      'commit 3f786850e387550fdab836ed7e6dc881de23001b (HEAD -> main)',
      'request id 123e4567-e89b-12d3-a456-426614174000 took 12ms',
      'const token = getToken()\nconst password = await prompt("Password: ")\nif (!token) throw new Error("no token")',
      'The token: a short-lived credential. Tokens are rotated daily.',
      'data: SGVsbG8gd29ybGQsIHRoaXMgaXMganVzdCBiYXNlNjQgdGV4dA==',
      'src/auth/token-store.ts:42 /home/me/.ssh/config ./secrets/README.md',
      'password: ********\napi_key: ${API_KEY}\ntoken: <your-token>\nsecret: ""\nauth: true',
      '{"max_tokens": 1024, "input_tokens": 80, "token_type": "Bearer", "author": "Jane"}',
      'export PATH="$HOME/bin:$PATH"; npm run build && npx vitest run',
      'uses: actions/checkout@v4\nenv:\n  GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}',
    ]
    for (const text of clean) expect(redactSecrets(text)).toBe(text)
  })

  it('redacts a mixed tool output in place, keeping keys, schemes, users and hosts', () => {
    const input = [
      '$ env | sort',
      `AWS_ACCESS_KEY_ID=${AWS_ID}`,
      `AWS_SECRET_ACCESS_KEY=${AWS_SECRET}`,
      `GITHUB_TOKEN=${GHP}`,
      'HOME=/home/me',
      'PGURL=postgresql://me:pa55word@db.example.com/app',
      '$ curl -H "Authorization: Bearer abc123def456ghi789" https://api.example.com',
    ].join('\n')
    expect(redactSecrets(input)).toBe(
      [
        '$ env | sort',
        'AWS_ACCESS_KEY_ID=[REDACTED:aws-access-key]',
        'AWS_SECRET_ACCESS_KEY=[REDACTED:aws-secret-key]',
        'GITHUB_TOKEN=[REDACTED:github-token]',
        'HOME=/home/me',
        'PGURL=postgresql://me:[REDACTED:url-password]@db.example.com/app',
        '$ curl -H "Authorization: Bearer [REDACTED:bearer-token]" https://api.example.com',
      ].join('\n'),
    )
  })

  it('keeps the Unicode around a secret intact', () => {
    expect(redactSecrets(`日本語 ${GHP} 😀 {"password": "pässwörd✓"} — fin`)).toBe(
      '日本語 [REDACTED:github-token] 😀 {"password": "[REDACTED:password]"} — fin',
    )
    expect(redactSecrets('café:\n  password: naïve✓\n  note: ünchanged')).toBe('café:\n  password: [REDACTED:password]\n  note: ünchanged')
    expect(redactSecrets(`🔑${cat('xo', 'xp-', '1234567890-abcdefghij')}🔑`)).toBe('🔑[REDACTED:slack-token]🔑')
  })

  it('keeps a JSON document parseable with non-secret fields unchanged', () => {
    const doc = {
      name: 'svc',
      version: '1.2.3',
      note: 'reset your password at https://x.io ✓ 日本',
      env: 'DB_HOST=localhost\nDB_PASSWORD=hunter2\nexport API_TOKEN="abc123xyz"\n',
      yaml: 'user: bob\npassword: s3cret!\nport: 5432',
      script: 'curl -u admin:pw123 -H "X-Api-Key: k3y" --token=t0k https://api.x.io',
      key: `${PEM}\n`,
      nested: { password: 'plain', url: 'postgres://app:pw@db:5432/x', list: [GHP, 1, true, null] },
      tail: 'password=abc\\',
    }
    const json = JSON.stringify(doc, null, 2)
    const parsed = JSON.parse(redactSecrets(json)) as typeof doc
    expect(parsed).toEqual({
      name: 'svc',
      version: '1.2.3',
      note: 'reset your password at https://x.io ✓ 日本',
      env: 'DB_HOST=localhost\nDB_PASSWORD=[REDACTED:password]\nexport API_TOKEN="[REDACTED:token]"\n',
      yaml: 'user: bob\npassword: [REDACTED:password]\nport: 5432',
      script: 'curl -u admin:[REDACTED:password] -H "X-Api-Key: [REDACTED:api-key]" --token=[REDACTED:token] https://api.x.io',
      key: '[REDACTED:private-key]\n',
      nested: {
        password: '[REDACTED:password]',
        url: 'postgres://app:[REDACTED:url-password]@db:5432/x',
        list: ['[REDACTED:github-token]', 1, true, null],
      },
      tail: 'password=[REDACTED:password]\\',
    })
    // JSON inside a JSON string (a transcript line holding a tool call's arguments)
    const twice = JSON.stringify({ arguments: JSON.stringify({ command: 'deploy', env: 'API_KEY=abc123\nMODE=prod', password: 'pw1' }) })
    const outer = JSON.parse(redactSecrets(twice)) as { arguments: string }
    expect(JSON.parse(outer.arguments)).toEqual({
      command: 'deploy',
      env: 'API_KEY=[REDACTED:api-key]\nMODE=prod',
      password: '[REDACTED:password]',
    })
  })

  it('is idempotent', () => {
    const all = Object.values(CASES).flatMap((c) => c.hits.map((h) => h.input))
    const text = all.join('\n')
    const once = redactSecrets(text)
    expect(redactSecrets(once)).toBe(once)
    expect(once).not.toContain(GHP)
  })

  it('removes <private> spans whole, any case, multi-line, unclosed to the end', () => {
    expect(redactSecrets('keep <private>my notes\nline 2</private> keep')).toBe('keep [PRIVATE] keep')
    expect(redactSecrets('a <PRIVATE>x</Private> b <private >y</private > c')).toBe('a [PRIVATE] b [PRIVATE] c')
    expect(redactSecrets('before <private>never stored\nmore\nand more')).toBe('before [PRIVATE]')
    expect(redactSecrets(`x <private>${GHP}</private> ${GHP}`)).toBe('x [PRIVATE] [REDACTED:github-token]')
    expect(redactSecrets('the <privateer> sailed')).toBe('the <privateer> sailed')
  })
})

describe('overlapping detectors', () => {
  /** Every placeholder whole: `[REDACTED:` is always followed by a type and `]`, never by another placeholder. */
  const wellFormed = (out: string): boolean => !/\[REDACTED(?!:[\w-]+\])/.test(out) && !out.includes('[REDACTED:[')

  it("never rewrites one detector's placeholder with another (curl -u key: keeps its stripe-key type)", () => {
    const cases: [string, string][] = [
      [`curl https://api.stripe.com/v1/charges -u ${STRIPE_LIVE}:`, 'curl https://api.stripe.com/v1/charges -u [REDACTED:stripe-key]:'],
      [
        `curl https://api.stripe.com/v1/charges -u ${STRIPE_LIVE}: -d amount=100`,
        'curl https://api.stripe.com/v1/charges -u [REDACTED:stripe-key]: -d amount=100',
      ],
      [`curl --user ${GHP}: https://api.github.com`, 'curl --user [REDACTED:github-token]: https://api.github.com'],
      [`curl -u "${STRIPE_LIVE}:" https://api.stripe.com`, 'curl -u "[REDACTED:stripe-key]:" https://api.stripe.com'],
      [`curl -u ${STRIPE_LIVE}:${GHP} https://x.test`, 'curl -u [REDACTED:stripe-key]:[REDACTED:github-token] https://x.test'],
    ]
    for (const [input, output] of cases) {
      expect(redactSecrets(input)).toBe(output)
      expect(redactSecrets(output)).toBe(output)
    }
  })

  it('keeps a vendor key inside URL userinfo, a JWT in a bearer header and a key before : or @ as one typed placeholder', () => {
    const cases: [string, string][] = [
      [`https://user:${STRIPE_LIVE}@api.stripe.com/v1`, 'https://user:[REDACTED:stripe-key]@api.stripe.com/v1'],
      [`https://${STRIPE_LIVE}:@api.stripe.com/v1`, 'https://[REDACTED:stripe-key]:@api.stripe.com/v1'],
      [
        `git clone https://x-access-token:${GHP}@github.com/o/r.git`,
        'git clone https://x-access-token:[REDACTED:github-token]@github.com/o/r.git',
      ],
      [`postgres://app:${JWT}@db.internal/app`, 'postgres://app:[REDACTED:jwt]@db.internal/app'],
      [`curl -H "Authorization: Bearer ${JWT}" https://x.test`, 'curl -H "Authorization: Bearer [REDACTED:jwt]" https://x.test'],
      [`Bearer ${JWT}:`, 'Bearer [REDACTED:jwt]:'],
      [`curl -u admin:${STRIPE_LIVE}@ https://x.test`, 'curl -u admin:[REDACTED:stripe-key]@ https://x.test'],
      [`password: ${STRIPE_LIVE}@`, 'password: [REDACTED:stripe-key]@'],
      [`TOKEN=${GHP}:`, 'TOKEN=[REDACTED:github-token]:'],
      [`curl --user ${AWS_ID}:${AWS_ID}@ x`, 'curl --user [REDACTED:aws-access-key]:[REDACTED:aws-access-key]@ x'],
    ]
    for (const [input, output] of cases) {
      expect(redactSecrets(input)).toBe(output)
      expect(wellFormed(redactSecrets(input))).toBe(true)
    }
  })

  it("leaves every placeholder whole when the table's hits are glued to : and @", () => {
    const inputs = Object.values(CASES).flatMap((c) => c.hits.map((h) => h.input))
    for (const input of inputs) {
      for (const glued of [`curl -u ${input}:`, `curl -u ${input}: x`, `https://u:${input}@h.test`, `${input}:`, `-u ${input}@`]) {
        expect(wellFormed(redactSecrets(glued)), glued).toBe(true)
      }
    }
  })

  it('finds nothing to replace in text that holds only placeholders', () => {
    expect(findSecrets('curl -u [REDACTED:stripe-key]: and [PRIVATE]:x')).toEqual([])
  })
})

describe('placeholders', () => {
  it('keeps only placeholders redaction writes: a key typed inside [REDACTED:…] by hand is still a key', () => {
    const text =
      'deploy key [REDACTED:sk_live_abcdefghijklmnopqrstuvwx] and [REDACTED:AKIAIOSFODNN7EXAMPLE], [REDACTED:ghp_abcdefghijklmnopqrstuvwxyz0123456789]'
    const out = redactSecrets(text)
    expect(out).not.toMatch(/sk_live_|AKIA|ghp_/)
    // What redaction writes stays whole, so a second pass changes nothing.
    expect(redactSecrets(out)).toBe(out)
    expect(redactSecrets('-u [REDACTED:stripe-key]: and [REDACTED] and [PRIVATE] and [REDACTED:api-key]')).toBe(
      '-u [REDACTED:stripe-key]: and [REDACTED] and [PRIVATE] and [REDACTED:api-key]',
    )
    expect(redactValue({ password: '[REDACTED:sk_live_abcdefghijklmnopqrstuvwx]' })).toEqual({ password: '[REDACTED:password]' })
  })

  it('reads a placeholder-shaped value with a type it never writes as a value: keyed secrets inside are found, the rest is a secret', () => {
    const cases: [string, string][] = [
      ['[REDACTED:DB_PASSWORD=Hunter2xyz ]', '[REDACTED:DB_PASSWORD=[REDACTED:password] ]'],
      ['"password": "[REDACTED:Tr0ub4dor]"', '"password": "[REDACTED:secret]"'],
      ['DB_PASSWORD=[REDACTED:hunter2]', 'DB_PASSWORD=[REDACTED:secret]'],
      ['postgres://u:[REDACTED:hunter2]@host/db', 'postgres://u:[REDACTED:secret]@host/db'],
      ['--password [REDACTED:Hunter2Secret]', '--password [REDACTED:secret]'],
      ['Authorization: Bearer [REDACTED:abcdef1234567890abcdef]', 'Authorization: Bearer [REDACTED:secret]'],
      ['"password": "[REDACTED:sk_live_abcdefghijklmnop1234]"', '"password": "[REDACTED:secret]"'],
      ['"password": "[REDACTED:password]"', '"password": "[REDACTED:password]"'],
      ['DB_PASSWORD=[REDACTED:hunter2.x]', 'DB_PASSWORD=[REDACTED:secret]'],
      ['password=[REDACTED:p@ss!word] ok', 'password=[REDACTED:secret] ok'],
      ['export API_TOKEN=[REDACTED:Zm9vYmFy/MTIz+NDU2]', 'export API_TOKEN=[REDACTED:secret]'],
      ['https://user:[REDACTED:hunter2.x]@host', 'https://user:[REDACTED:secret]@host'],
      ['[REDACTED:sk_live_abcdefghijklmnopqrstuvwx.more]', '[REDACTED:secret]'],
    ]
    for (const [text, want] of cases) {
      expect(redactSecrets(text), text).toBe(want)
      expect(redactSecrets(want), want).toBe(want)
    }
    expect(redactValue({ password: '[REDACTED:hunter2]' })).toEqual({ password: '[REDACTED:password]' })
  })
})

describe('findSecrets', () => {
  it('reports the spans it would replace, sorted, without overlaps', () => {
    const text = `a=1 password="pw" ${GHP} <private>z</private>`
    const spans = findSecrets(text)
    expect(spans).toEqual([
      { type: 'password', start: 14, end: 16 },
      { type: 'github-token', start: 18, end: 58 },
      { type: 'private', start: 59, end: 79 },
    ])
    expect(text.slice(14, 16)).toBe('pw')
    expect(findSecrets('nothing here')).toEqual([])
    expect(findSecrets('')).toEqual([])
  })

  it('refuses a pattern whose regex is not global and indexed', () => {
    const bad: SecretPattern = { id: 'bad', type: 'x', regex: /x/, description: 'no flags', reference: '-' }
    expect(() => findSecrets('x', [bad])).toThrowError(
      expect.objectContaining({ name: 'MnemoError', code: 'INVALID_INPUT', details: { path: 'patterns' } }),
    )
  })

  it('gives a specific pattern priority over a keyed one', () => {
    expect(findSecrets(`GITHUB_TOKEN=${GHP}`)).toEqual([{ type: 'github-token', start: 13, end: 53 }])
  })
})

describe('triggers (SecretPattern.trigger)', () => {
  // A seeded soup of keys (credential words in every case and shape, look-alikes), separators and values.
  let seed = 20261202
  const rnd = (n: number): number => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff
    return seed % n
  }
  const pick = (list: readonly string[]): string => list[rnd(list.length)] ?? ''
  const prefixes = ['', 'db_', 'DB_', 'my', 'x-', 'aws.', 'client', 'Client_', 'api_', 'API', 'no_', 'max_', 'page_', 'the']
  const words = [
    ...['password', 'Password', 'PASSWORD', 'passwd', 'Pwd', 'pass', 'passphrase', 'PassPhrase', 'token', 'Token', 'TOKEN', 'accessToken'],
    ...['secret', 'Secret', 'apiKey', 'api_key', 'API_KEY', 'accesskey', 'privateKey', 'secretKey', 'auth', 'Auth', 'authorization'],
    ...['credential', 'Credentials', 'key', 'Key', 'tokens', 'passwords', 'author', 'keyboard', 'tokenizer', 'keys', 'passes', 'authority'],
  ]
  const suffixes = ['', '_value', 'Value', '.b64', '-hex', '_raw_value', 'B64', '_file', 's', '2', '_base64', 'Plaintext', '_id']
  const keys: string[] = []
  for (const p of prefixes) for (const w of words) for (const x of suffixes) keys.push(`${p}${w}${x}`)
  const seps = [
    '=',
    ' = ',
    ': ',
    ':',
    '"="',
    '": "',
    '\\": \\"',
    ' := ',
    ' => ',
    ': str = ',
    '=\t',
    ' ',
    '"] = ',
    "' : ",
    ' is ',
    ' was set to ',
  ]
  const values = ['"hunter2-x"', "'s3cr3t-Value'", 'hunter2', 'abcDEF123456789xyz', '\\"v4lue\\"', 'getToken(),', 'string', 'T0k3n-Secret']
  const leads = ['', 'export ', '--', 'the ', '\\n', '{"', '- ', 'curl -u me:', '  ']
  const texts: string[] = []
  for (let i = 0; i < 6000; i++) {
    let text = ''
    const parts = 1 + rnd(3)
    for (let k = 0; k < parts; k++) text += `${pick(leads)}${pick(keys)}${pick(seps)}${pick(values)}${pick(['\n', ' ', '; ', ', '])}`
    texts.push(text)
  }
  for (const c of Object.values(CASES)) texts.push(...c.hits.map((h) => h.input), ...c.misses)
  const bare = SECRET_PATTERNS.map(({ trigger: _trigger, ...p }) => p)

  it('skips a pattern on text its trigger does not match, even where its regex matches', () => {
    const p: SecretPattern = { id: 't', type: 't', regex: /abc/dg, trigger: /zzz/, description: 'a test entry', reference: '-' }
    expect(findSecrets('abc', [p])).toEqual([])
    expect(findSecrets('abc zzz', [p])).toEqual([{ type: 't', start: 0, end: 3 }])
    // A trigger with a flag besides `i` is tested as written, not inside the one-scan union of the others.
    const m: SecretPattern = { ...p, id: 'm', type: 'm', trigger: /^yyy/m }
    expect(findSecrets('abc\nyyy', [p, m])).toEqual([{ type: 'm', start: 0, end: 3 }])
    expect(findSecrets('abc', [p, m])).toEqual([])
  })

  it('ends every key secretKeyType names a credential with SECRET_KEY_END, in some case', () => {
    const end = new RegExp(`(?:${SECRET_KEY_END})$`, 'i')
    const named = keys.filter((k) => secretKeyType(k) !== undefined)
    // Both kinds occur, so the check means something.
    expect(named.length).toBeGreaterThan(1000)
    expect(keys.length - named.length).toBeGreaterThan(1000)
    for (const k of named) expect(end.test(k), k).toBe(true)
  })

  it('finds the same spans with the triggers as without them, entry by entry and for the whole table', () => {
    let found = 0
    for (const text of texts) {
      const spans = findSecrets(text)
      expect(spans, text).toEqual(findSecrets(text, bare))
      if (spans.length > 0) found++
      for (const [i, p] of SECRET_PATTERNS.entries()) {
        if (p.trigger === undefined || p.trigger.test(text)) continue
        expect(findSecrets(text, [bare[i]!]), `${p.id}: ${text}`).toEqual([])
      }
    }
    // Most texts hold a secret the table finds, so the triggers are tested where they let entries run.
    expect(found).toBeGreaterThan(texts.length / 3)
  })
})

describe('secretKeyType', () => {
  it('answers a key asked again, or asked after 10,000 others, as the first time (its answers are kept)', () => {
    const keys = ['DB_PASSWORD', 'max_tokens', 'apiKey', 'author', `${'x'.repeat(90)}_token`]
    const first = keys.map((k) => secretKeyType(k))
    expect(first).toEqual(['password', undefined, 'api-key', undefined, 'token'])
    expect(keys.map((k) => secretKeyType(k))).toEqual(first)
    for (let i = 0; i < 10_050; i++) secretKeyType(`field_${i}`)
    expect(keys.map((k) => secretKeyType(k))).toEqual(first)
  })

  it('maps secret-like key names to placeholder types', () => {
    const cases: [string, string | undefined][] = [
      ['password', 'password'],
      ['DB_PASSWORD', 'password'],
      ['db.pass', 'password'],
      ['passwd', 'password'],
      ['GITHUB_TOKEN', 'token'],
      ['accessToken', 'token'],
      ['refresh_token', 'token'],
      ['api_key', 'api-key'],
      ['apiKey', 'api-key'],
      ['X-Api-Key', 'api-key'],
      ['APIKEY', 'api-key'],
      ['aws_access_key', 'access-key'],
      ['private_key', 'private-key'],
      ['client_secret', 'secret'],
      ['SECRET_KEY_BASE', 'secret'],
      ['auth', 'auth'],
      ['Authorization', 'auth'],
      ['credentials', 'credential'],
      ['max_tokens', undefined],
      ['input_tokens', undefined],
      ['token_type', undefined],
      ['pageToken', undefined],
      ['tokenizer', undefined],
      ['author', undefined],
      ['password_file', undefined],
      ['bypass', undefined],
      ['public_key', undefined],
      ['key', undefined],
      ['no-password', undefined],
    ]
    for (const [key, type] of cases) expect([key, secretKeyType(key)]).toEqual([key, type])
  })
})

describe('isPlaceholderValue', () => {
  it('recognises stand-ins, not secrets', () => {
    for (const v of [
      '',
      '  ',
      '********',
      'xxxx',
      '${DB_PASSWORD}',
      '$TOKEN',
      '$(cat f)',
      '{{ .Values.pw }}',
      '<your-token>',
      'YOUR_API_KEY',
      'your-password-here',
      'null',
      'None',
      '[REDACTED:password]',
      'Bearer [REDACTED:jwt]',
      '*default',
    ]) {
      expect([v, isPlaceholderValue(v)]).toEqual([v, true])
    }
    for (const v of ['hunter2', 'x', 'p@ss w0rd', 'changeme', 'mypassword123', 'Tr0ub4dor&3'])
      expect([v, isPlaceholderValue(v)]).toEqual([v, false])
  })
})

describe('redactValue', () => {
  it('redacts strings under secret-like keys whole, keys and shape untouched', () => {
    const input = {
      password: 'x',
      user: 'bob',
      max_tokens: 5,
      nested: {
        Authorization: 'Bearer abc',
        apiKey: 'k',
        token: '',
        secret: '${SECRET}',
        auth: { username: 'u', pass: 'p' },
        list: [GHP, 'plain', { client_secret: 'cs' }],
      },
      note: 'DB_PASSWORD=hunter2 in prose',
    }
    const before = JSON.stringify(input)
    expect(redactValue(input)).toEqual({
      password: '[REDACTED:password]',
      user: 'bob',
      max_tokens: 5,
      nested: {
        Authorization: 'Bearer [REDACTED:bearer-token]',
        apiKey: '[REDACTED:api-key]',
        token: '',
        secret: '${SECRET}',
        auth: { username: 'u', pass: '[REDACTED:password]' },
        list: ['[REDACTED:github-token]', 'plain', { client_secret: '[REDACTED:secret]' }],
      },
      note: 'DB_PASSWORD=[REDACTED:password] in prose',
    })
    expect(JSON.stringify(input)).toBe(before)
    expect(redactValue('ok')).toBe('ok')
    expect(redactValue(42)).toBe(42)
    expect(redactValue(null)).toBe(null)
  })
})

describe('as the capture Redactor', () => {
  it('plugs into sanitizePayload', () => {
    const redact: Redactor = redactSecrets
    const payload = {
      tool_name: 'Bash',
      tool_input: { command: `export NPM_TOKEN=${NPM}` },
      tool_response: { stdout: 'ok <private>diary</private>' },
    }
    expect(sanitizePayload(payload, redact)).toEqual({
      tool_name: 'Bash',
      tool_input: { command: 'export NPM_TOKEN=[REDACTED:npm-token]' },
      tool_response: { stdout: 'ok [PRIVATE]' },
    })
  })
})

describe('properties over generated text', () => {
  // A seeded soup of keys, separators, quotes, escapes and real-shaped secrets, as raw text and inside JSON.
  const words = [
    'password',
    'token',
    'api_key',
    'DB_PASSWORD',
    'Authorization:',
    'Bearer',
    'curl',
    '-u',
    '--token',
    '--password',
    'export',
    'user',
    'hunter2',
    'admin:pw1',
    '${X}',
    '😀',
    'é',
    '日本',
    'x',
    '{',
    '}',
    '[',
    ']',
    '(',
    ')',
    '#',
    '`',
    'https://u:p4ss@h.io/x',
    cat('AccountKey=', 'Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6'),
    'private_key',
    '<private>',
    '</private>',
  ]
  const secrets = [JWT, AWS_ID, ANTHROPIC, GHP, PEM, SLACK_BOT, NPM, 'abcDEF123456789xyz']
  const seps = [' ', '\n', '=', ': ', '"', "'", ', ', '\t', ' = ', '\\n', '":"', '"; ']
  let seed = 20240611
  const rnd = (n: number): number => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff
    return seed % n
  }
  const pick = (list: string[]): string => list[rnd(list.length)] ?? ''
  const samples: string[] = []
  for (let i = 0; i < 1500; i++) {
    let text = ''
    const len = 1 + rnd(25)
    for (let k = 0; k < len; k++) text += (rnd(3) === 0 ? pick(secrets) : pick(words)) + pick(seps)
    samples.push(text)
  }

  it('is idempotent and leaves no known secret behind', () => {
    for (const text of samples) {
      const once = redactSecrets(text)
      expect(redactSecrets(once)).toBe(once)
      for (const secret of [GHP, ANTHROPIC, AWS_ID, NPM]) expect(once.includes(secret)).toBe(false)
    }
  })

  it('keeps JSON documents parseable and their plain fields intact', () => {
    for (const text of samples) {
      // An unclosed <private> inside a JSON document removes to the end of the text by design.
      if (/<private>(?![\s\S]*<\/private>)/.test(text)) continue
      for (const doc of [
        { a: text, b: { password: text }, c: 'plain' },
        { wrapped: JSON.stringify({ a: text, c: 'plain' }), c: 'plain' },
      ]) {
        const parsed = JSON.parse(redactSecrets(JSON.stringify(doc))) as { c: string; wrapped?: string }
        expect(parsed.c).toBe('plain')
        if (parsed.wrapped !== undefined) expect((JSON.parse(parsed.wrapped) as { c: string }).c).toBe('plain')
      }
    }
  })
})

describe('adversarial input', () => {
  // Completion is the assertion: a catastrophic backtrack would hit the test timeout.
  it('stays linear on 200 KB worst cases', () => {
    expect(redactSecrets('a'.repeat(200_000))).toBe('a'.repeat(200_000))
    expect(redactSecrets(`-----BEGIN PRIVATE KEY-----${'A'.repeat(200_000)}`)).toBe('[REDACTED:private-key]')
    expect(redactSecrets('password='.repeat(20_000))).toBe('password=[REDACTED:password]')
    const more = [
      '-----BEGIN PRIVATE KEY-----'.repeat(7_400),
      '<private'.repeat(25_000),
      'curl '.repeat(40_000),
      'password="'.repeat(20_000),
      'http://a:'.repeat(20_000),
      'eyJaaaaaaaaaaaa.'.repeat(12_000),
      '\\n'.repeat(100_000),
      'a=b '.repeat(50_000),
      '"token": "'.repeat(20_000),
      '--token '.repeat(25_000),
      ' '.repeat(200_000),
      `token${' '.repeat(200_000)}`,
      'key: '.repeat(40_000),
      `"${'\\'.repeat(200_000)}`,
      `Authorization: Bearer ${'a'.repeat(200_000)}`,
      'a='.repeat(100_000),
      ': --token '.repeat(20_000),
      'AccountKey=send '.repeat(12_500),
      '="private_key": "'.repeat(12_000),
      "'x=".repeat(66_000),
    ]
    for (const s of more) expect(typeof redactSecrets(s)).toBe('string')
  })

  it('redacts text holding a match millions of characters long, which overflows the regex stack in one piece', () => {
    // 20 million token characters: V8 throws "Maximum call stack size exceeded" on such a match; the text is then
    // scanned in windows. A huge quoted value under a harmless key is left as it is.
    const token = 'B1'.repeat(10_000_000)
    expect(redactSecrets(`Authorization: Bearer ${token}\nnext line`)).toBe('Authorization: Bearer [REDACTED:bearer-token]\nnext line')
    // Whole, not just its first scan window.
    expect(redactSecrets(`x sk_live_${'a'.repeat(10_000_000)} tail`)).toBe('x [REDACTED:stripe-key] tail')
    const quoted = JSON.stringify({ note: 'B'.repeat(20_000_000), password: 'hunter2-but-longer' })
    expect(redactSecrets(quoted)).toBe(JSON.stringify({ note: 'B'.repeat(20_000_000), password: '[REDACTED:password]' }))
  })
})
