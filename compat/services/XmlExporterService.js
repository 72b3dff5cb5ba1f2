'use strict'
// XmlExporterService of the compat layer: the legacy service's names and arguments (skeleton
// objects in, XML text out), written by the core's XML writers so that every export is valid
// against schemas/task.xsd, conversation.xsd and project.xsd (in both modes: the shapes are the
// schemas', see docs/compat-services.md for how they differ from the legacy text).
// `saveXmlToFile` keeps the legacy path rules and error codes and writes through `fs/promises`
// (looked up at call time, so mocks and spies of that module see the write).

const path = require('path')
const fsp = require('fs/promises')
const { currentMode } = require('./compat-mode.js')

function binding() {
  return require('../../index.js')
}

class StateManagerError extends Error {
  constructor(message, code, service, details, cause) {
    super(message)
    this.name = 'StateManagerError'
    this.code = code
    this.service = service
    this.details = details
    this.cause = cause
    this.category = 'UNKNOWN'
  }

  toJSON() {
    return {
      name: this.name,
      message: this.message,
      code: this.code,
      service: this.service,
      category: this.category,
      details: this.details,
    }
  }
}

// Only the fields the writers read, so that large unrelated fields never cross the boundary.
function slim(s) {
  if (!s || typeof s !== 'object') return s
  return {
    taskId: s.taskId,
    parentTaskId: s.parentTaskId,
    truncatedInstruction: s.truncatedInstruction,
    isCompleted: s.isCompleted,
    metadata: s.metadata,
    sequence: s.sequence,
  }
}

function nativeOptions(options) {
  const o = options || {}
  return {
    prettyPrint: o.prettyPrint !== false,
    includeContent: o.includeContent === true,
    maxDepth: typeof o.maxDepth === 'number' && Number.isFinite(o.maxDepth) ? Math.max(1, Math.floor(o.maxDepth)) : undefined,
    startDate: typeof o.startDate === 'string' ? o.startDate : undefined,
    endDate: typeof o.endDate === 'string' ? o.endDate : undefined,
  }
}

function generationError(err, method, details) {
  return new StateManagerError(
    `XML generation failed: ${err && err.message ? err.message : String(err)}`,
    'XML_GENERATION_FAILED',
    'XmlExporterService',
    { method, ...details },
    err instanceof Error ? err : undefined,
  )
}

// Legacy mode: the legacy service reads these fields without checks, so a skeleton lacking them
// fails with the same TypeError.
function legacyChecks(skeleton) {
  if (currentMode() !== 'legacy') return
  const m = skeleton.metadata
  m.messageCount.toString()
  m.actionCount.toString()
  m.totalSize.toString()
}

class XmlExporterService {
  generateTaskXml(skeleton, options = {}) {
    legacyChecks(skeleton)
    try {
      return binding().compatTaskXml(JSON.stringify(slim(skeleton)), nativeOptions(options))
    } catch (err) {
      throw generationError(err, 'generateTaskXml', { taskId: skeleton && skeleton.taskId })
    }
  }

  generateConversationXml(rootSkeleton, children, options = {}) {
    legacyChecks(rootSkeleton)
    try {
      return binding().compatConversationXml(
        JSON.stringify(slim(rootSkeleton)),
        JSON.stringify((children || []).map(slim)),
        nativeOptions(options),
      )
    } catch (err) {
      throw generationError(err, 'generateConversationXml', { rootTaskId: rootSkeleton && rootSkeleton.taskId })
    }
  }

  generateProjectXml(skeletons, projectPath, options = {}) {
    try {
      return binding().compatProjectXml(
        JSON.stringify((skeletons || []).map(slim)),
        String(projectPath),
        nativeOptions(options),
      )
    } catch (err) {
      throw generationError(err, 'generateProjectXml', { projectPath })
    }
  }

  validateFilePath(filePath) {
    if (/\.\./.test(filePath) || /^[/\\]/.test(filePath) || /[<>:"|?*]/.test(filePath)) {
      throw new StateManagerError(`Unsafe file path: ${filePath}`, 'PATH_TRAVERSAL_DETECTED', 'XmlExporterService', {
        filePath,
        method: 'validateFilePath',
      })
    }
    if (filePath.length > 260) {
      throw new StateManagerError(`File path too long: ${filePath}`, 'PATH_TOO_LONG', 'XmlExporterService', {
        filePath,
        length: filePath.length,
        maxLength: 260,
      })
    }
  }

  async saveXmlToFile(xmlContent, filePath) {
    this.validateFilePath(filePath)
    await fsp.mkdir(path.dirname(filePath), { recursive: true })
    await fsp.writeFile(filePath, xmlContent, 'utf-8')
  }
}

module.exports = { XmlExporterService, StateManagerError }
