/**
 * The agents the suite drives, one entry each: how `mnemo connect` names it,
 * which hook events a session must store, how to point its binary at the fake
 * model offline, and what its own names for tools look like. A new agent (or
 * a new expectation, such as per-prompt injection) is a change to this table;
 * the assertions in agents.test.ts loop over it.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { World } from './harness.js'
import type { FakeModel } from './fake-model.js'

export interface AgentSpec {
  /** Short id: the artifacts/fixtures folder name. */
  id: 'claude' | 'codex' | 'gemini' | 'opencode'
  /** The name `mnemo connect` and `--agent` take, and the agent stored events carry. */
  mnemoAgent: string
  /** Binary in test/agents/node_modules/.bin. */
  bin: string
  /** mnemo event types a session that runs one shell command must store, each exactly once. */
  sessionEvents: readonly string[]
  /** Tool names the agent gives its shell tool (the observation's `tool`). */
  shellTool: RegExp
  /**
   * Checks this agent is known to fail until a fix lands, by the start of the check's name, with the reason:
   * they are skipped (and reported as pending) rather than run. Remove an entry when its fix is in.
   */
  pending?: Readonly<Record<string, string>>
  /** The prompt as the agent itself sends it on (OpenCode's `run` quotes it); the stored prompt must be exactly this. */
  promptAsSent?(prompt: string): string
  /** Extra setup after connect (settings the offline run needs that connect does not write). */
  prepare?(w: World, model: FakeModel): void
  /** argv and environment (beyond PATH, HOME, TERM) of one headless session. */
  command(w: World, model: FakeModel, prompt: string): { args: string[]; env: Record<string, string> }
}

export const ALL_AGENTS: readonly AgentSpec[] = [
  {
    id: 'claude',
    mnemoAgent: 'claude-code',
    bin: 'claude',
    sessionEvents: ['SessionStart', 'UserPromptSubmit', 'PreToolUse', 'PostToolUse', 'Stop', 'SessionEnd'],
    shellTool: /^Bash$/,
    command: (_w, model, prompt) => ({
      args: ['-p', prompt, '--dangerously-skip-permissions', '--output-format', 'stream-json', '--verbose'],
      env: {
        ANTHROPIC_BASE_URL: model.url,
        ANTHROPIC_API_KEY: 'sk-ant-fake-000',
        DISABLE_TELEMETRY: '1',
        DISABLE_AUTOUPDATER: '1',
        DISABLE_ERROR_REPORTING: '1',
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
        DISABLE_NON_ESSENTIAL_MODEL_CALLS: '1',
        CLAUDE_CODE_ENABLE_TELEMETRY: '0',
        // --dangerously-skip-permissions refuses to run as root outside a sandbox.
        IS_SANDBOX: '1',
      },
    }),
  },
  {
    id: 'codex',
    mnemoAgent: 'codex',
    bin: 'codex',
    sessionEvents: ['SessionStart', 'UserPromptSubmit', 'PostToolUse', 'Stop'],
    // Codex's PostToolUse payload names its shell tool Bash, as Claude Code does.
    shellTool: /^(Bash|exec_command|shell|shell_command|local_shell)$/,
    command: (w, model, prompt) => ({
      // The provider comes in with -c, so config.toml stays exactly as connect wrote it. No --dangerously-bypass-hook-trust:
      // the hooks run because connect recorded their trust.
      args: [
        'exec',
        '-c',
        'model_provider=fake',
        '-c',
        'model=fake-model',
        '-c',
        `model_providers.fake={name="fake",base_url="${model.url}/v1",env_key="FAKE_API_KEY",wire_api="responses",request_max_retries=0,stream_max_retries=0}`,
        '--dangerously-bypass-approvals-and-sandbox',
        '--skip-git-repo-check',
        '--json',
        prompt,
      ],
      env: { CODEX_HOME: join(w.home, '.codex'), FAKE_API_KEY: 'sk-fake-000' },
    }),
  },
  {
    id: 'gemini',
    mnemoAgent: 'gemini',
    bin: 'gemini',
    sessionEvents: ['SessionStart', 'UserPromptSubmit', 'PostToolUse', 'Stop', 'SessionEnd'],
    shellTool: /^run_shell_command$/,
    prepare: (w) => {
      // API-key auth, no telemetry or update checks: settings connect does not own, added beside its entries.
      const file = join(w.home, '.gemini', 'settings.json')
      const s = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>
      s.security = { auth: { selectedType: 'gemini-api-key' } }
      s.privacy = { usageStatisticsEnabled: false }
      s.general = { disableAutoUpdate: true }
      writeFileSync(file, `${JSON.stringify(s, null, 2)}\n`)
    },
    command: (_w, model, prompt) => ({
      args: ['-p', prompt, '--yolo', '--output-format', 'json'],
      env: {
        GEMINI_API_KEY: 'fake-gemini-key',
        GOOGLE_GEMINI_BASE_URL: model.url,
        GEMINI_CLI_TRUST_WORKSPACE: 'true',
        GEMINI_TELEMETRY_ENABLED: 'false',
      },
    }),
  },
  {
    id: 'opencode',
    mnemoAgent: 'opencode',
    bin: 'opencode',
    sessionEvents: ['SessionStart', 'UserPromptSubmit', 'PreToolUse', 'PostToolUse', 'Stop'],
    shellTool: /^bash$/,
    promptAsSent: (p) => `"${p}"`,
    prepare: (w, model) => {
      // The fake provider goes in a file of its own (OPENCODE_CONFIG), so connect's opencode.json stays as written.
      writeFileSync(
        join(w.root, 'provider.json'),
        JSON.stringify(
          {
            $schema: 'https://opencode.ai/config.json',
            model: 'fake/fake-model',
            autoupdate: false,
            share: 'disabled',
            provider: {
              fake: {
                npm: '@ai-sdk/openai-compatible',
                name: 'Fake',
                options: { baseURL: `${model.url}/v1`, apiKey: 'sk-fake-000' },
                models: { 'fake-model': { name: 'fake-model', tool_call: true, limit: { context: 128000, output: 4096 } } },
              },
            },
          },
          null,
          2,
        ),
      )
    },
    command: (w, _model, prompt) => ({
      args: ['run', '--format', 'json', '--auto', '--print-logs', '--log-level', 'INFO', prompt],
      env: {
        OPENCODE_CONFIG: join(w.root, 'provider.json'),
        OPENCODE_DISABLE_MODELS_FETCH: '1',
        OPENCODE_DISABLE_AUTOUPDATE: '1',
        OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
        OPENCODE_DISABLE_SHARE: '1',
      },
    }),
  },
]

/** The agents this run drives: all, or those named in MNEMO_AGENTS (comma-separated ids, e.g. `claude,codex`). */
export const AGENTS: readonly AgentSpec[] =
  process.env.MNEMO_AGENTS === undefined || process.env.MNEMO_AGENTS === ''
    ? ALL_AGENTS
    : ALL_AGENTS.filter((a) =>
        process.env
          .MNEMO_AGENTS!.split(',')
          .map((s) => s.trim())
          .includes(a.id),
      )
