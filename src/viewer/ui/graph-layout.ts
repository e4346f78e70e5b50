/** Places an entity graph for drawing: the centre in the middle, the others on a circle. Pure, so unit-tested. */
import type { Entity, GraphEdge } from './types.js'

interface PlacedNode {
  entity: Entity
  x: number
  y: number
  /** Circle radius, 5–18, by documents mentioning it (log scale). */
  r: number
  /** Where its label goes, and which way the text runs from there. */
  labelX: number
  labelY: number
  anchor: 'start' | 'middle' | 'end'
  isCenter: boolean
}

interface PlacedEdge {
  from: PlacedNode
  to: PlacedNode
  weight: number
  /** Stroke width, 1–6, by weight relative to the heaviest edge. */
  width: number
  /** True when it touches the centre (drawn stronger than edges among neighbours). */
  spoke: boolean
}

interface Layout {
  width: number
  height: number
  nodes: PlacedNode[]
  edges: PlacedEdge[]
}

/**
 * Lays out `nodes` (the centre, when given, in the middle; the rest evenly
 * on a circle, heaviest first from the top, clockwise) and the `edges` among
 * them; edges naming an entity id not placed are dropped.
 */
export function layoutGraph(
  center: Entity | null,
  nodes: readonly Entity[],
  edges: readonly GraphEdge[],
  width = 960,
  height = 620,
): Layout {
  const cx = width / 2
  const cy = height / 2
  const ring = nodes.filter((n) => center === null || n.id !== center.id)
  const all = center === null ? ring : [center, ...ring]
  const maxDocs = Math.max(1, ...all.map((n) => n.docs))
  // Log-scaled: one entity in every document must not shrink the rest to dots.
  const radius = (n: Entity): number => 5 + 13 * (Math.log1p(Math.max(0, n.docs)) / Math.log1p(maxDocs))
  const R = Math.min(width, height) / 2 - 50
  const placed: PlacedNode[] = []
  if (center !== null) {
    const r = radius(center)
    placed.push({ entity: center, x: cx, y: cy, r, labelX: cx, labelY: cy + r + 16, anchor: 'middle', isCenter: true })
  }
  ring.forEach((n, i) => {
    const angle = -Math.PI / 2 + (2 * Math.PI * i) / Math.max(1, ring.length)
    const x = cx + R * Math.cos(angle)
    const y = cy + R * Math.sin(angle)
    const r = radius(n)
    const cos = Math.cos(angle)
    const anchor = Math.abs(cos) < 0.1 ? 'middle' : cos > 0 ? 'start' : 'end'
    const off = r + 6
    const labelX = anchor === 'middle' ? x : x + (cos > 0 ? off : -off)
    const labelY = anchor === 'middle' ? (Math.sin(angle) < 0 ? y - off : y + off + 10) : y + 4
    placed.push({ entity: n, x, y, r, labelX, labelY, anchor, isCenter: false })
  })
  const byId = new Map(placed.map((p) => [p.entity.id, p]))
  const kept: { from: PlacedNode; to: PlacedNode; weight: number }[] = []
  for (const e of edges) {
    const from = byId.get(e.source)
    const to = byId.get(e.target)
    if (from === undefined || to === undefined || from === to) continue
    kept.push({ from, to, weight: e.weight })
  }
  const maxWeight = Math.max(1e-9, ...kept.map((e) => e.weight))
  const placedEdges: PlacedEdge[] = kept.map((e) => ({
    ...e,
    width: 1 + 5 * Math.max(0, e.weight / maxWeight),
    spoke: e.from.isCenter || e.to.isCenter,
  }))
  // Spokes last, so they are drawn over the edges among neighbours.
  placedEdges.sort((a, b) => Number(a.spoke) - Number(b.spoke))
  return { width, height, nodes: placed, edges: placedEdges }
}

/** The weight of the edge between two entities (either direction), or 0. */
export function edgeWeight(edges: readonly GraphEdge[], a: number, b: number): number {
  let w = 0
  for (const e of edges) if ((e.source === a && e.target === b) || (e.source === b && e.target === a)) w += e.weight
  return w
}
