'use strict'
// XmlExporterService of the compat layer: the legacy service's names, arguments and XML text
// (docs/compat-services.md §2). The legacy service built its documents with an XML builder
// library; this module writes the same text itself (same elements, attribute order, escaping,
// two-space indentation, self-closing empty elements, text-only elements on one line), so the
// caller needs no XML library.
// Modes: `legacy` writes what the legacy service wrote, errors included; `fixed` keeps the
// elements and attributes and corrects the values (escapes every `&`, drops characters XML 1.0
// forbids, counts a project conversation's whole tree, skips unparsable dates, writes 0 for a
// missing count, and never loops on a cycle of parent links).
// `saveXmlToFile` writes through `fs/promises` (looked up at call time, so mocks see the write);
// errors are the caller's `StateManagerError` when its replacement file handed over its modules
// (compat/services/caller-services.js).

const io = require('../io.js')
const { currentMode } = require('./compat-mode.js')
const { errorClasses, errorClassesNow } = require('./caller-services.js')
const { StateManagerError } = require('./errors.js')

// ---------------------------------------------------------------------------------------------
// The document: elements with ordered attributes and either one text or child elements.

function element(name, attrs) {
  const node = { name, attrs: [], children: [], text: undefined }
  if (attrs) for (const [k, v] of Object.entries(attrs)) if (v !== undefined && v !== null) node.attrs.push([k, '' + v])
  return node
}

function child(parent, name, attrs) {
  const node = element(name, attrs)
  parent.children.push(node)
  return node
}

// A text child: nothing for `null`/`undefined` (the element stays empty), else the value as text.
function text(node, value) {
  if (value !== undefined && value !== null) node.text = '' + value
  return node
}

// XML 1.0 characters: tab, LF, CR, U+0020–U+D7FF, U+E000–U+FFFD and U+10000–U+10FFFF.
const NOT_XML_CHAR = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu

// Legacy: an `&` that starts something entity-shaped (`&name;`, `&#123;`) is written as it is.
const LEGACY_AMP = /&(?![A-Za-z]+;|#\d+;)/g

const TEXT_SPECIAL = /[&<>]/
const ATTR_SPECIAL = /[&<>"]/
const ENTITY = { '<': '&lt;', '>': '&gt;', '"': '&quot;' }
const entity = (c) => ENTITY[c]

function escaper(fixed) {
  const clean = fixed ? (s) => s.replace(NOT_XML_CHAR, '') : (s) => s
  const amp = fixed ? (s) => s.replace(/&/g, '&amp;') : (s) => s.replace(LEGACY_AMP, '&amp;')
  const escape = (special, others) => (raw) => {
    const s = clean(raw)
    return special.test(s) ? amp(s).replace(others, entity) : s
  }
  return { text: escape(TEXT_SPECIAL, /[<>]/g), attr: escape(ATTR_SPECIAL, /[<>"]/g) }
}

function serialize(root, prettyPrint, fixed) {
  const esc = escaper(fixed)
  const nl = prettyPrint ? '\n' : ''
  let out = '<?xml version="1.0" encoding="UTF-8"?>' + nl
  const walk = (node, indent) => {
    out += `${indent}<${node.name}`
    for (const [k, v] of node.attrs) out += ` ${k}="${esc.attr(v)}"`
    if (node.text !== undefined) {
      // Pretty printing writes an element whose only text is empty as an empty element.
      if (prettyPrint && node.text === '') out += '/>' + nl
      else out += `>${esc.text(node.text)}</${node.name}>${nl}`
    } else if (node.children.length === 0) {
      out += '/>' + nl
    } else {
      out += '>' + nl
      const inner = prettyPrint ? indent + '  ' : ''
      for (const c of node.children) walk(c, inner)
      out += `${indent}</${node.name}>${nl}`
    }
  }
  walk(root, '')
  return prettyPrint ? out.slice(0, -1) : out
}

// ---------------------------------------------------------------------------------------------
// The legacy elements.

// A count as the legacy service wrote it (`value.toString()`: a missing one throws a TypeError);
// `fixed` writes 0 for a missing or non-numeric count.
function countText(value, fixed) {
  if (fixed) return String(typeof value === 'number' && Number.isFinite(value) ? value : Number(value) || 0)
  return value.toString()
}

function addMetadata(parent, skeleton, fixed) {
  const m = skeleton.metadata
  const metadata = child(parent, 'metadata')
  if (m.title) text(child(metadata, 'title'), m.title)
  text(child(metadata, 'lastActivity'), m.lastActivity)
  text(child(metadata, 'createdAt'), m.createdAt)
  if (m.mode) text(child(metadata, 'mode'), m.mode)
  text(child(metadata, 'messageCount'), countText(m.messageCount, fixed))
  text(child(metadata, 'actionCount'), countText(m.actionCount, fixed))
  text(child(metadata, 'totalSize'), countText(m.totalSize, fixed))
}

function preview(content, includeContent, fixed) {
  if (includeContent) return content
  const c = fixed && typeof content !== 'string' ? (content == null ? '' : String(content)) : content
  return c.length > 100 ? c.substring(0, 100) + '...' : c
}

function addSequence(parent, skeleton, includeContent, fixed) {
  const sequence = child(parent, 'sequence')
  for (const item of skeleton.sequence ?? []) {
    if (fixed && (item === null || typeof item !== 'object')) continue
    if ('role' in item) {
      const message = child(sequence, 'message', {
        role: item.role,
        timestamp: item.timestamp,
        ...(item.isTruncated && { isTruncated: 'true' }),
      })
      text(message, preview(item.content, includeContent, fixed))
    } else {
      const action = child(sequence, 'action', {
        type: item.type,
        name: item.name,
        status: item.status,
        timestamp: item.timestamp,
        ...(item.file_path && { filePath: item.file_path }),
        ...(item.line_count && { lineCount: item.line_count.toString() }),
        ...(item.content_size && { contentSize: item.content_size.toString() }),
      })
      if (item.parameters && Object.keys(item.parameters).length > 0) {
        text(child(action, 'parameters'), JSON.stringify(item.parameters))
      }
    }
  }
}

function addTask(parent, skeleton, includeContent, fixed) {
  const task = child(parent, 'task', {
    taskId: skeleton.taskId,
    ...(skeleton.parentTaskId && { parentTaskId: skeleton.parentTaskId }),
  })
  addMetadata(task, skeleton, fixed)
  addSequence(task, skeleton, includeContent, fixed)
  return task
}

const time = (value) => new Date(value).getTime()

// The legacy date range: the earliest and latest `lastActivity` (now when there is none); an
// unparsable date makes it throw `RangeError: Invalid time value`. `fixed` skips those dates.
function dateRange(skeletons, fixed) {
  let min = Infinity
  let max = -Infinity
  let seen = 0
  for (const s of skeletons) {
    const t = time(s.metadata.lastActivity)
    if (Number.isNaN(t)) {
      if (fixed) continue
      min = NaN
      max = NaN
    }
    seen++
    if (t < min) min = t
    if (t > max) max = t
  }
  if (seen === 0) {
    const now = new Date()
    return { start: now.toISOString(), end: now.toISOString() }
  }
  return { start: new Date(min).toISOString(), end: new Date(max).toISOString() }
}

// Tasks under `rootId` among `skeletons`: `legacy` counts the root's direct children only,
// `fixed` its whole tree (each task once).
function treeSize(rootId, skeletons, fixed) {
  if (!fixed) return 1 + skeletons.filter((s) => s.parentTaskId === rootId).length
  const byParent = new Map()
  for (const s of skeletons) {
    if (!s.parentTaskId) continue
    if (!byParent.has(s.parentTaskId)) byParent.set(s.parentTaskId, [])
    byParent.get(s.parentTaskId).push(s.taskId)
  }
  const seen = new Set([rootId])
  const todo = [rootId]
  while (todo.length > 0) {
    for (const id of byParent.get(todo.pop()) ?? []) {
      if (!seen.has(id)) {
        seen.add(id)
        todo.push(id)
      }
    }
  }
  return seen.size
}

class XmlExporterService {
  constructor() {
    // Starts loading the caller's error classes, so that a later synchronous throw uses them.
    errorClassesNow()
  }

  generateTaskXml(skeleton, options = {}) {
    const { prettyPrint = true, includeContent = false } = options
    const fixed = currentMode() === 'fixed'
    const root = element('task', {
      taskId: skeleton.taskId,
      ...(skeleton.parentTaskId && { parentTaskId: skeleton.parentTaskId }),
    })
    addMetadata(root, skeleton, fixed)
    addSequence(root, skeleton, includeContent, fixed)
    return serialize(root, prettyPrint, fixed)
  }

  generateConversationXml(rootSkeleton, children, options = {}) {
    const { prettyPrint = true, maxDepth = Infinity } = options
    const fixed = currentMode() === 'fixed'
    const root = element('conversation', {
      conversationId: rootSkeleton.taskId,
      exportTimestamp: new Date().toISOString(),
    })
    const written = new Set()
    const addTree = (parent, skeleton, depth) => {
      if (depth > maxDepth) return
      if (fixed) {
        if (written.has(skeleton.taskId)) return
        written.add(skeleton.taskId)
      }
      const task = addTask(parent, skeleton, options.includeContent, fixed)
      const kids = children.filter((c) => c.parentTaskId === skeleton.taskId)
      if (kids.length > 0) {
        const list = child(task, 'children')
        for (const k of kids) addTree(list, k, depth + 1)
      }
    }
    addTree(child(root, 'rootTask'), rootSkeleton, 1)
    return serialize(root, prettyPrint, fixed)
  }

  generateProjectXml(skeletons, projectPath, options = {}) {
    const { prettyPrint = true, startDate, endDate } = options
    const fixed = currentMode() === 'fixed'
    let kept = [...skeletons]
    if (startDate) {
      const start = new Date(startDate)
      kept = kept.filter((s) => new Date(s.metadata.lastActivity) >= start)
    }
    if (endDate) {
      const end = new Date(endDate)
      kept = kept.filter((s) => new Date(s.metadata.lastActivity) <= end)
    }
    const roots = kept.filter((s) => !s.parentTaskId)
    const totalSize = kept.reduce((sum, s) => sum + (fixed ? Number(s.metadata.totalSize) || 0 : s.metadata.totalSize), 0)
    const range = dateRange(kept, fixed)

    const root = element('projectExport')
    const summary = child(root, 'summary')
    text(child(summary, 'projectPath'), projectPath)
    text(child(summary, 'exportTimestamp'), new Date().toISOString())
    text(child(summary, 'conversationCount'), roots.length.toString())
    text(child(summary, 'totalTasks'), kept.length.toString())
    text(child(summary, 'totalSize'), totalSize.toString())
    child(summary, 'dateRange', range)
    const conversations = child(root, 'conversations')
    for (const r of roots) {
      child(conversations, 'conversation', {
        rootTaskId: r.taskId,
        ...(r.metadata.title && { title: r.metadata.title }),
        taskCount: treeSize(r.taskId, kept, fixed).toString(),
        lastActivity: r.metadata.lastActivity,
      })
    }
    return serialize(root, prettyPrint, fixed)
  }

  validateFilePath(filePath) {
    const { StateManagerError: Err } = errorClassesNow()
    if ([/\.\./, /^[/\\]/, /[<>:"|?*]/].some((p) => p.test(filePath))) {
      throw new Err(`Unsafe file path: ${filePath}`, 'PATH_TRAVERSAL_DETECTED', 'XmlExporterService', {
        filePath,
        method: 'validateFilePath',
      })
    }
    if (filePath.length > 260) {
      throw new Err(`File path too long: ${filePath}`, 'PATH_TOO_LONG', 'XmlExporterService', {
        filePath,
        length: filePath.length,
        maxLength: 260,
      })
    }
  }

  async saveXmlToFile(xmlContent, filePath) {
    await errorClasses()
    this.validateFilePath(filePath)
    const fsp = io.mod('fs/promises')
    await fsp.mkdir(io.mod('path').dirname(filePath), { recursive: true })
    await fsp.writeFile(filePath, xmlContent, 'utf-8')
  }
}

module.exports = { XmlExporterService, StateManagerError }
