// The conversion of results to JavaScript fills the first objects of each shape field by field and
// makes the later ones with a function compiled for that shape: both must give the same objects.

import { describe, expect, it } from 'vitest'
import fs from 'node:fs'
import path from 'node:path'
import { core, repoRoot, tempDir } from './helpers'

const stores = path.join(repoRoot, 'fixtures', 'stores')

/** Every object in `value`, depth first. */
function objects(value: unknown, out: object[] = []): object[] {
  if (value && typeof value === 'object') {
    if (!Array.isArray(value)) out.push(value)
    for (const v of Object.values(value)) objects(v, out)
  }
  return out
}

/** `value` with every BigInt made the number nearest to it, as `Number(b)` rounds. */
function numbersOnly(value: unknown): unknown {
  if (typeof value === 'bigint') return Number(value)
  if (Array.isArray(value)) return value.map(numbersOnly)
  if (value && typeof value === 'object' && !Buffer.isBuffer(value)) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, numbersOnly(v)]))
  }
  return value
}

/** Every BigInt in `value`, depth first. */
function bigints(value: unknown, out: bigint[] = []): bigint[] {
  if (typeof value === 'bigint') out.push(value)
  else if (value && typeof value === 'object' && !Buffer.isBuffer(value)) {
    for (const v of Object.values(value)) bigints(v, out)
  }
  return out
}

describe('result writer against napi\'s serde conversion', () => {
  // conversionSample(seed) converts one Rust value (crates/napi/src/js_value/sample.rs: numbers
  // at every edge incl. -0, NaN, the infinities, u64 past 2^53 and u128; strings with NUL, astral
  // characters and both sides of the long-string cache; nesting; 120 task trees of several shapes
  // past the count at which a shape is compiled) by both paths. They must agree, except that
  // napi makes an integer past 32 bits a BigInt where the writer gives the nearest number.
  for (const seed of [1, 2, 3, 42, 1000, 65535]) {
    it(`writes sample ${seed} as napi does, numbers as numbers`, () => {
      const { writer, serde } = core.conversionSample(seed) as { writer: unknown; serde: unknown }
      expect(bigints(writer)).toEqual([])
      expect(bigints(serde).length).toBeGreaterThan(0)
      // toEqual tells -0 from 0 and takes NaN as equal to NaN.
      expect(writer).toEqual(numbersOnly(serde))
      // Each number past 32 bits is the double JSON.parse gives for its decimal text.
      const w = writer as { numbers: Record<string, number>[] }
      const s = serde as { numbers: Record<string, number | bigint>[] }
      s.numbers.forEach((n, i) => {
        for (const [k, v] of Object.entries(n)) {
          if (typeof v === 'bigint') expect(w.numbers[i][k], `${k} ${v}`).toBe(JSON.parse(String(v)))
        }
      })
      // A second conversion (every cache cold again) gives the same value.
      expect(core.conversionSample(seed).writer).toEqual(writer)
    })
  }
  it('keeps -0, NaN and the infinities, which JSON would lose', () => {
    const { writer } = core.conversionSample(1) as { writer: { numbers: { double: number }[]; pair: unknown[] } }
    expect(Object.is(writer.pair[2], -0)).toBe(true)
    const doubles = new Set(writer.numbers.map((n) => String(n.double)))
    for (const kept of ['NaN', 'Infinity', '-Infinity']) expect(doubles.has(kept), kept).toBe(true)
  })
})

describe('result conversion', () => {
  it('writes every object of one shape alike, before and after the shape is compiled', async () => {
    let largest = 0
    for (const name of fs.readdirSync(stores)) {
      const tasks = path.join(stores, name, 'tasks')
      if (!fs.existsSync(tasks)) continue
      const scan = await core.scanTasks(tasks, { includeSequence: true, hierarchy: {} })
      // Objects with the same set of fields, by that set: each must list them in the same order,
      // be a plain object and hold only enumerable own fields.
      const bySet = new Map<string, string[][]>()
      for (const o of objects(scan)) {
        expect(Object.getPrototypeOf(o)).toBe(Object.prototype)
        expect(Object.getOwnPropertyNames(o)).toEqual(Object.keys(o))
        const keys = Object.keys(o)
        const set = [...keys].sort().join(',')
        bySet.set(set, [...(bySet.get(set) ?? []), keys])
      }
      for (const [set, orders] of bySet) {
        largest = Math.max(largest, orders.length)
        for (const order of orders) expect(order, set).toEqual(orders[0])
      }
    }
    // Some shape is met well past the count at which it is compiled.
    expect(largest).toBeGreaterThan(16)
  })

  it('gives every string its text, whether its field repeats its strings or not', async () => {
    // 360 tasks copied from the fixture stores under new ids: fields whose strings repeat (host,
    // workspace, file names) share them, fields whose strings do not (ids, paths, dates) stop
    // sharing after their first lookups; either way each skeleton must be the one a conversion
    // of that task alone gives.
    const sources: string[] = []
    for (const name of fs.readdirSync(stores)) {
      const tasks = path.join(stores, name, 'tasks')
      if (!fs.existsSync(tasks)) continue
      for (const t of fs.readdirSync(tasks)) {
        if (fs.statSync(path.join(tasks, t)).isDirectory()) sources.push(path.join(tasks, t))
      }
    }
    expect(sources.length).toBeGreaterThan(10)
    const dir = tempDir('conversion-')
    for (let i = 0; i < 360; i++) {
      const id = `0000${String(i).padStart(4, '0')}-0000-4000-8000-${String(i).padStart(12, '0')}`
      fs.cpSync(sources[i % sources.length], path.join(dir, id), { recursive: true })
    }
    const scan = await core.scanTasks(dir, {})
    // A few fixture folders are deliberately not tasks.
    expect(scan.skeletons.length).toBeGreaterThan(300)
    for (const skeleton of scan.skeletons) {
      const alone = await core.analyzeConversation(skeleton.taskId, path.join(dir, skeleton.taskId), {
        includeSequence: false,
      })
      expect(skeleton).toEqual(alone)
    }
    fs.rmSync(dir, { recursive: true, force: true })
  })

  it('gives two long strings of one length and one hash each its own text', async () => {
    // Long strings are shared by content across the whole result, found by their length and a
    // hash of their bytes: these two collide (the Rust test of the hasher checks that they do),
    // and each task must still get its own instruction, and the task repeating the first one the
    // same text again.
    const [first, second] = JSON.parse(
      fs.readFileSync(path.join(repoRoot, '__tests__', 'golden', 'word-hash-collision.json'), 'utf8'),
    ) as [string, string]
    const dir = tempDir('collision-')
    const texts = [first, second, first, second]
    texts.forEach((text, i) => {
      const task = path.join(dir, `task-${i}`)
      fs.mkdirSync(task)
      const ui = [{ ts: 1_700_000_000_000 + i, type: 'say', say: 'text', text }]
      fs.writeFileSync(path.join(task, 'ui_messages.json'), JSON.stringify(ui))
    })
    const scan = await core.scanTasks(dir, {})
    const byId = new Map(scan.skeletons.map((s) => [s.taskId, s.instruction]))
    expect(byId.size).toBe(texts.length)
    texts.forEach((text, i) => expect(byId.get(`task-${i}`)).toBe(text))
    fs.rmSync(dir, { recursive: true, force: true })
  })
})
