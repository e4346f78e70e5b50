import { createServer, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Llm } from '../providers/llm.js'
import { createOpenAiCompatibleLlm } from '../providers/openai-llm.js'

/** The part of an OpenAI chat-completions request the fakes look at. */
export interface ChatRequest {
  messages: { role: string; content: string }[]
  response_format: { type: string; json_schema?: { name: string } }
}

const servers: Server[] = []

/**
 * A fake OpenAI-compatible chat endpoint on 127.0.0.1 (a real HTTP server on
 * loopback, no mocks): `answer` gets each parsed request body. Close every
 * fake with {@link closeFakeChats} in `afterEach`.
 *
 * @returns The base URL (`http://127.0.0.1:<port>/v1`) and the requests seen, in order.
 */
export async function fakeChat(
  answer: (body: ChatRequest, res: ServerResponse) => void,
): Promise<{ baseUrl: string; seen: ChatRequest[] }> {
  const seen: ChatRequest[] = []
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ChatRequest
      seen.push(body)
      answer(body, res)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  servers.push(server)
  return { baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, seen }
}

/** Closes every fake started by {@link fakeChat}. */
export async function closeFakeChats(): Promise<void> {
  for (const server of servers.splice(0)) {
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

/** Answers a chat request with `value` as the assistant's JSON content (700 prompt, 120 completion tokens). */
export function reply(res: ServerResponse, value: unknown): void {
  res.writeHead(200, { 'content-type': 'application/json' })
  res.end(
    JSON.stringify({
      choices: [{ message: { role: 'assistant', content: JSON.stringify(value) }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 700, completion_tokens: 120 },
    }),
  )
}

/** Answers with an HTTP error and an OpenAI-style error body. */
export function replyError(res: ServerResponse, status: number, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json' })
  res.end(JSON.stringify({ error: { message } }))
}

/** An OpenAI-compatible LLM on a fake: one retry, no waiting between attempts. */
export function llmAt(baseUrl: string): Llm {
  return createOpenAiCompatibleLlm({ baseUrl, model: 'test-chat', maxRetries: 1, sleep: async () => {}, random: () => 0 })
}
