// The conversion of results to JavaScript fills the first objects of each shape field by field and
// makes the later ones with a function compiled for that shape: both must give the same objects.

import { describe, expect, it } from 'vitest'
import fs from 'node:fs'
import path from 'node:path'
import { core, repoRoot } from './helpers'

const stores = path.join(repoRoot, 'fixtures', 'stores')

/** Every object in `value`, depth first. */
function objects(value: unknown, out: object[] = []): object[] {
  if (value && typeof value === 'object') {
    if (!Array.isArray(value)) out.push(value)
    for (const v of Object.values(value)) objects(v, out)
  }
  return out
}

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
})
