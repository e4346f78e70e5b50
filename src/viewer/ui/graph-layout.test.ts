import { describe, expect, it } from 'vitest'
import { edgeWeight, layoutGraph } from './graph-layout.js'

const e = (id: number, docs = 1) => ({ id, type: 'file', name: `n${id}`, docs })

describe('layoutGraph', () => {
  it('puts the centre in the middle and the others on a circle around it', () => {
    const l = layoutGraph(e(1, 4), [e(1, 4), e(2), e(3), e(4)], [], 800, 600)
    const [c, ...ring] = l.nodes
    expect(c?.isCenter).toBe(true)
    expect([c?.x, c?.y]).toEqual([400, 300])
    const dists = ring.map((n) => Math.round(Math.hypot(n.x - 400, n.y - 300)))
    expect(new Set(dists).size).toBe(1)
    expect(ring).toHaveLength(3)
    expect(ring[0]?.y).toBeLessThan(300)
  })

  it('places every node on the circle when there is no centre', () => {
    const l = layoutGraph(null, [e(1), e(2)], [], 800, 600)
    expect(l.nodes.every((n) => !n.isCenter)).toBe(true)
    expect(l.nodes).toHaveLength(2)
  })

  it('maps edges by entity id, drops unknown ids, scales widths to 1–6 and draws spokes last', () => {
    const l = layoutGraph(
      e(1),
      [e(1), e(2), e(3)],
      [
        { source: 2, target: 3, weight: 1 },
        { source: 1, target: 2, weight: 4 },
        { source: 1, target: 99, weight: 9 },
      ],
    )
    expect(l.edges.map((x) => [x.from.entity.id, x.to.entity.id, x.width, x.spoke])).toEqual([
      [2, 3, 2.25, false],
      [1, 2, 6, true],
    ])
  })

  it('sizes nodes by documents', () => {
    const l = layoutGraph(null, [e(1, 100), e(2, 1)], [])
    expect(l.nodes[0]!.r).toBeGreaterThan(l.nodes[1]!.r)
  })
})

describe('edgeWeight', () => {
  it('sums the edges between two entities in either direction', () => {
    expect(
      edgeWeight(
        [
          { source: 1, target: 2, weight: 2 },
          { source: 2, target: 1, weight: 1 },
          { source: 1, target: 3, weight: 5 },
        ],
        1,
        2,
      ),
    ).toBe(3)
    expect(edgeWeight([], 1, 2)).toBe(0)
  })
})
