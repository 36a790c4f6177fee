/**
 * Ordering and placement of the items (states and virtual edge points) of one container's
 * layers. Pure arithmetic over sizes; no knowledge of machines.
 */

export interface LayerItem {
  id: string
  layer: number
  w: number
  h: number
  /** Centre x and top y, relative to the container's content box. */
  x: number
  y: number
  virtual?: boolean
}

const GAP_X = 28
const GAP_Y = 12

function byLayer(items: Map<string, LayerItem>): LayerItem[][] {
  const layers: LayerItem[][] = []
  for (const item of items.values()) (layers[item.layer] ??= []).push(item)
  return Array.from(layers, (layer) => layer ?? [])
}

function neighbours(chains: string[][]): Map<string, string[]> {
  const result = new Map<string, string[]>()
  const link = (a: string, b: string) => result.set(a, [...(result.get(a) ?? []), b])
  for (const chain of chains) {
    for (let i = 1; i < chain.length; i++) {
      link(chain[i - 1], chain[i])
      link(chain[i], chain[i - 1])
    }
  }
  return result
}

/** Barycenter sweeps (down, then up) to reduce crossings; writes the order into `x`. */
export function orderLayers(items: Map<string, LayerItem>, chains: string[][]): void {
  const layers = byLayer(items)
  const near = neighbours(chains)
  layers.forEach((layer) => layer.forEach((item, i) => (item.x = i)))
  const sweep = (order: number[], adjacent: (layer: number) => number) => {
    for (const index of order) {
      const layer = layers[index]
      const key = (item: LayerItem) => {
        const others = (near.get(item.id) ?? []).map((id) => items.get(id)!).filter((o) => o.layer === adjacent(index))
        return others.length ? others.reduce((sum, o) => sum + o.x, 0) / others.length : item.x
      }
      const keys = new Map(layer.map((item) => [item, key(item)]))
      layer.sort((a, b) => keys.get(a)! - keys.get(b)! || a.x - b.x)
      layer.forEach((item, i) => (item.x = i))
    }
  }
  const indices = layers.map((_, i) => i)
  for (let round = 0; round < 4; round++) {
    sweep(indices.slice(1), (i) => i - 1)
    sweep(indices.slice(0, -1).reverse(), (i) => i + 1)
  }
}

/** Keeps order and spacing while pulling each item toward `desired` centres. */
function pack(layer: LayerItem[], desired: number[]): void {
  const left = layer.map(() => 0)
  const right = layer.map(() => 0)
  layer.forEach((item, i) => {
    const min = i === 0 ? -Infinity : left[i - 1] + layer[i - 1].w / 2 + GAP_X + item.w / 2
    left[i] = Math.max(desired[i], min)
  })
  for (let i = layer.length - 1; i >= 0; i--) {
    const item = layer[i]
    const max = i === layer.length - 1 ? Infinity : right[i + 1] - layer[i + 1].w / 2 - GAP_X - item.w / 2
    right[i] = Math.min(desired[i], max)
  }
  layer.forEach((item, i) => {
    const x = (left[i] + right[i]) / 2
    item.x = i === 0 ? x : Math.max(x, layer[i - 1].x + layer[i - 1].w / 2 + GAP_X + item.w / 2)
  })
}

/** Assigns coordinates in the order `orderLayers` chose; returns the content size. */
export function positionLayers(items: Map<string, LayerItem>, chains: string[][]): { w: number; h: number } {
  const layers = byLayer(items)
  const near = neighbours(chains)
  for (const layer of layers) {
    layer.sort((a, b) => a.x - b.x)
    let cursor = 0
    for (const item of layer) {
      item.x = cursor + item.w / 2
      cursor += item.w + GAP_X
    }
  }
  const width = Math.max(...layers.map((layer) => layer.reduce((sum, item) => sum + item.w + GAP_X, -GAP_X)))
  for (const layer of layers) {
    const used = layer.reduce((sum, item) => sum + item.w + GAP_X, -GAP_X)
    layer.forEach((item) => (item.x += (width - used) / 2))
  }
  const towardNeighbours = (index: number) => {
    const layer = layers[index]
    const desired = layer.map((item) => {
      const others = (near.get(item.id) ?? []).map((id) => items.get(id)!).filter((o) => Math.abs(o.layer - index) === 1)
      return others.length ? others.reduce((sum, o) => sum + o.x, 0) / others.length : item.x
    })
    pack(layer, desired)
  }
  for (let round = 0; round < 6; round++) {
    for (let i = 1; i < layers.length; i++) towardNeighbours(i)
    for (let i = layers.length - 2; i >= 0; i--) towardNeighbours(i)
  }
  let minX = Infinity
  let maxX = -Infinity
  for (const item of items.values()) {
    minX = Math.min(minX, item.x - item.w / 2)
    maxX = Math.max(maxX, item.x + item.w / 2)
  }
  let y = 0
  for (const layer of layers) {
    const height = Math.max(0, ...layer.map((item) => item.h))
    for (const item of layer) {
      item.x -= minX
      item.y = y + (height - item.h) / 2
    }
    y += height + (height ? GAP_Y : 0)
  }
  return { w: maxX - minX, h: Math.max(0, y - GAP_Y) }
}
