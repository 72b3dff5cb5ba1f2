// What the trees and lists of several stores say beyond each store's own tasks: a task that two
// stores hold (Zoo Code's import of Roo Code's history copies each task folder under Zoo's own) is
// shown once, from its newer copy, with the other copies named (`alsoIn`); a subtask abandoned in
// Zoo Code is named under the parent that abandoned it. The decisions are the core's
// (TaskStore.sharedAcross, the hierarchy's `abandoned` issues); this only places them.
import { core, has } from './binding.mjs'

/**
 * The tasks several of the loaded stores hold, by id: `{ taskId, tasksDir (where it is shown),
 * host, alsoIn: [{ tasksDir, host, path, differs }] }`. Empty for one store.
 * @param {{handle: any}[]} loaded
 * @returns {Map<string, any>}
 */
export function sharedTasks(loaded) {
  const handles = loaded.map((l) => l.handle).filter(Boolean)
  if (handles.length < 2 || !has('TaskStore') || typeof core().TaskStore.sharedAcross !== 'function') return new Map()
  return new Map(core().TaskStore.sharedAcross(handles).map((s) => [s.taskId, s]))
}

/** How many of the tasks of `tasksDir` are shown from another store. */
export function shownElsewhere(shared, tasksDir) {
  let n = 0
  for (const s of shared.values()) if (s.tasksDir !== tasksDir && s.alsoIn.some((a) => a.tasksDir === tasksDir)) n++
  return n
}

/**
 * The top nodes of one store's tree with each task shown from another store taken out (a subtask
 * of it that this store shows comes to the top, with `parentShownIn`), the other copies of the
 * tasks it shows named (`alsoIn`), depths and creation order kept.
 */
export function placeCopies(roots, shared, tasksDir) {
  if (!shared.size) return roots
  const lifted = []
  const keep = (n, parentShownIn) => {
    const s = shared.get(n.taskId)
    if (s && s.tasksDir !== tasksDir) {
      for (const c of n.children ?? []) keep(c, s.tasksDir)
      return null
    }
    const node = { ...n, children: (n.children ?? []).map((c) => keep(c, null)).filter(Boolean) }
    if (s) node.alsoIn = s.alsoIn
    if (parentShownIn) {
      node.parentShownIn = parentShownIn
      lifted.push(node)
      return null
    }
    return node
  }
  const top = roots.map((r) => keep(r, null)).filter(Boolean)
  for (const n of lifted) top.push(n)
  for (const n of top) setDepth(n, 0)
  return top.sort(creationOrder)
}

/** Nodes in the tree's order: the creation date text, then the task id. */
function creationOrder(a, b) {
  const x = String(a.createdAt ?? '')
  const y = String(b.createdAt ?? '')
  if (x !== y) return x < y ? -1 : 1
  return a.taskId < b.taskId ? -1 : a.taskId > b.taskId ? 1 : 0
}

function setDepth(n, depth) {
  const stack = [[n, depth]]
  while (stack.length) {
    const [x, d] = stack.pop()
    x.depth = d
    for (const c of x.children ?? []) stack.push([c, d + 1])
  }
}

/**
 * Names in a tree each subtask abandoned in Zoo Code (the hierarchy's `abandoned` issues): the
 * parent's node gets `abandonedSubtasks`, the subtask's node `abandonedBy` (the parents that still
 * list it). Nodes are changed in place.
 */
export function noteAbandoned(roots, metrics) {
  const issues = (metrics?.issues ?? []).filter((i) => i.kind === 'abandoned')
  if (!issues.length) return roots
  const byChild = new Map(issues.map((i) => [i.taskId, i.candidates]))
  const byParent = new Map()
  for (const i of issues) for (const p of i.candidates) byParent.set(p, [...(byParent.get(p) ?? []), i.taskId])
  const stack = [...roots]
  while (stack.length) {
    const n = stack.pop()
    if (byChild.has(n.taskId)) n.abandonedBy = byChild.get(n.taskId)
    if (byParent.has(n.taskId)) n.abandonedSubtasks = byParent.get(n.taskId)
    for (const c of n.children ?? []) stack.push(c)
  }
  return roots
}

/**
 * Marks in place, without taking anything out (a page of one store keeps its count): a node or
 * list item shown from a newer copy in another store gets `shownIn` (that store), one shown here
 * `alsoIn` (its other copies).
 */
export function markCopies(items, shared, tasksDir) {
  if (!shared.size) return items
  const stack = [...items]
  while (stack.length) {
    const n = stack.pop()
    const s = shared.get(n.taskId)
    if (s && s.tasksDir !== tasksDir) n.shownIn = s.tasksDir
    else if (s) n.alsoIn = s.alsoIn
    for (const c of n.children ?? []) stack.push(c)
  }
  return items
}
