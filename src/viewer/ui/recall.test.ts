import { describe, expect, it } from 'vitest'
import { channelBadges, defaultChannels, recallBody } from './recall.js'

describe('recall helpers', () => {
  it('ticks at first only the channels the server says recall uses, as the CLI (issue 17 item 16)', () => {
    const server = [
      { name: 'bm25', on: true },
      { name: 'vector', on: false },
      { name: 'embedding', on: false },
      { name: 'graph', on: true },
      { name: 'time', on: true },
    ]
    expect(defaultChannels(server)).toEqual(['bm25', 'time', 'graph'])
    expect(defaultChannels(undefined)).toEqual(['bm25', 'time', 'graph', 'vector', 'embedding'])
  })

  it('omits channels when all are checked and asks for explain', () => {
    expect(recallBody('q', 'p', 10, ['bm25', 'time', 'graph', 'vector', 'embedding'])).toEqual({
      query: 'q',
      project: 'p',
      limit: 10,
      explain: true,
    })
  })

  it('sends only the checked channels, in canonical order', () => {
    expect(recallBody('q', 'p', 10, ['graph', 'bm25']).channels).toEqual(['bm25', 'graph'])
  })

  it('lists channel badges best rank first', () => {
    expect(channelBadges({ channels: { graph: { rank: 4, score: 0.1 }, bm25: { rank: 1, score: 3 } } })).toEqual(['bm25 #1', 'graph #4'])
    expect(channelBadges({})).toEqual([])
  })
})
