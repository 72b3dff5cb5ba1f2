'use strict'
// JsonCsvExporter of the compat layer: JSON (light/full) and CSV (conversations/messages/tools)
// summaries of one skeleton, with the legacy names, arguments (the caller's classifier and helper
// callbacks) and results (`{success, content, statistics, error?}`, never a rejection).
// `legacy` mode keeps the legacy cell quirks: a falsy value (`false`, `0`) is an empty cell,
// workspace and first-message cells are quoted twice when they need quoting, `isCompleted` is
// always false. `fixed` mode writes `false`/`0`, quotes each cell once and uses the skeleton's
// `isCompleted`.

const binding = require('../../../index.js')
const { currentMode } = require('../compat-mode.js')

const CSV_VARIANTS = ['conversations', 'messages', 'tools']

const isMessage = (item) => item && typeof item === 'object' && 'role' in item && 'content' in item
const messagesOf = (s) => (s.sequence ?? []).filter(isMessage)
const pct = (part, whole) => (whole > 0 ? Math.round((part / whole) * 100 * 10) / 10 : 0)

class JsonCsvExporter {
  constructor(classifier) {
    this.classifier = classifier
  }

  async generateJsonSummary(conversation, options, helpers) {
    const variant = (options && options.jsonVariant) || 'light'
    try {
      const doc =
        variant === 'light'
          ? {
              format: 'roo-conversation-light',
              version: '1.0',
              exportTime: new Date().toISOString(),
              summary: this.calculateJsonLightSummary([conversation]),
              conversations: [this.convertToJsonSkeleton(conversation)],
              drillDown: { available: true, endpoint: 'view_task_details', fullDataEndpoint: 'get_raw_conversation' },
            }
          : {
              format: 'roo-conversation-full',
              version: '1.0',
              exportTime: new Date().toISOString(),
              task: {
                taskId: conversation.taskId,
                metadata: {
                  createdAt: conversation.metadata.createdAt,
                  lastActivity: conversation.metadata.lastActivity,
                  messageCount: conversation.metadata.messageCount,
                  actionCount: conversation.metadata.actionCount,
                  totalSize: conversation.metadata.totalSize,
                  workspace: conversation.metadata.workspace || 'unknown',
                },
                messages: this.convertToJsonMessages(conversation, options, helpers),
                children: [],
              },
            }
      const content = JSON.stringify(doc, null, 2)
      const statistics = this.calculateJsonStatistics([conversation], this.classifier)
      return {
        success: true,
        content,
        statistics: {
          ...statistics,
          compressionRatio: helpers.calculateCompressionRatio(helpers.getOriginalContentSize(conversation), content.length),
        },
      }
    } catch (error) {
      return {
        success: false,
        content: '',
        statistics: helpers.getEmptyStatistics(),
        error: error instanceof Error ? error.message : 'JSON generation error',
      }
    }
  }

  async generateCsvSummary(conversation, options, helpers) {
    const variant = (options && options.csvVariant) || 'conversations'
    if (!CSV_VARIANTS.includes(variant)) {
      return {
        success: false,
        content: '',
        statistics: helpers.getEmptyStatistics(),
        error: `Unsupported CSV variant: ${variant}. Supported: ${CSV_VARIANTS.join(', ')}`,
      }
    }
    try {
      let content
      if (variant === 'messages') content = this.generateCsvMessages(conversation, options, helpers)
      else if (variant === 'tools') content = this.generateCsvTools(conversation, options)
      else content = this.generateCsvConversations([conversation], helpers)
      return { success: true, content, statistics: helpers.getEmptyStatistics() }
    } catch (error) {
      return {
        success: false,
        content: '',
        statistics: helpers.getEmptyStatistics(),
        error: error instanceof Error ? error.message : 'CSV generation error',
      }
    }
  }

  calculateJsonLightSummary(conversations) {
    const times = conversations.map((c) => new Date(c.metadata.createdAt).getTime()).sort((a, b) => a - b)
    return {
      totalConversations: conversations.length,
      totalMessages: conversations.reduce((n, c) => n + c.metadata.messageCount, 0),
      totalSize: conversations.reduce((n, c) => n + c.metadata.totalSize, 0),
      dateRange: {
        earliest: new Date(times[0] || Date.now()).toISOString(),
        latest: new Date(times[times.length - 1] || Date.now()).toISOString(),
      },
    }
  }

  convertToJsonSkeleton(conversation) {
    return {
      taskId: conversation.taskId,
      firstUserMessage: this.truncateText(this.extractFirstUserMessage(conversation), 200),
      isCompleted: currentMode() === 'fixed' ? conversation.isCompleted === true : false,
      workspace: conversation.metadata.workspace || 'unknown',
      createdAt: conversation.metadata.createdAt,
      lastActivity: conversation.metadata.lastActivity,
      messageCount: conversation.metadata.messageCount,
      actionCount: conversation.metadata.actionCount,
      totalSize: conversation.metadata.totalSize,
      children: [],
    }
  }

  extractFirstUserMessage(conversation) {
    const first = (conversation.sequence ?? []).find((i) => i && typeof i === 'object' && 'role' in i && i.role === 'user')
    return (first && first.content) || ''
  }

  convertToJsonMessages(conversation, options, helpers) {
    return messagesOf(conversation).map((m) => ({
      role: m.role,
      timestamp: m.timestamp,
      content: helpers.truncateContent(m.content, options.truncationChars),
      isTruncated: helpers.isContentTruncated(m.content, options.truncationChars),
      toolCalls: this.extractToolCallsFromMessage(m.content),
    }))
  }

  // The calls are read by the core (`compatTraceToolCalls`); the result cut and the JSON parse of
  // MCP arguments (a call whose arguments are not JSON is left out) stay here.
  extractToolCallsFromMessage(content) {
    if (!content) return []
    const calls = []
    for (const c of binding.compatTraceToolCalls(String(content), currentMode() === 'fixed')) {
      if (!c.mcp) {
        calls.push({
          toolName: c.toolName,
          arguments: c.path ? { path: c.path } : {},
          result: c.result.substring(0, 500),
          success: c.success,
        })
        continue
      }
      try {
        calls.push({
          toolName: c.toolName,
          serverName: c.serverName,
          arguments: c.mcpArguments === undefined ? {} : JSON.parse(c.mcpArguments),
          result: '',
          success: true,
        })
      } catch {
        // arguments that are not JSON: the call is left out
      }
    }
    return calls
  }

  // Legacy mode quotes these cells once here and once more when the row is written.
  preEscaped(value) {
    return currentMode() === 'fixed' ? value : this.escapeCsv(value)
  }

  generateCsvConversations(conversations, helpers) {
    const headers = ['taskId', 'workspace', 'isCompleted', 'createdAt', 'lastActivity', 'messageCount', 'actionCount', 'totalSize', 'firstUserMessage']
    const rows = conversations.map((c) => [
      c.taskId,
      this.preEscaped(c.metadata.workspace || ''),
      currentMode() === 'fixed' ? c.isCompleted === true : false,
      c.metadata.createdAt,
      c.metadata.lastActivity,
      c.metadata.messageCount,
      c.metadata.actionCount,
      c.metadata.totalSize,
      this.preEscaped(helpers.truncateText(this.extractFirstUserMessage(c), 200)),
    ])
    return this.formatCsvOutput(headers, rows)
  }

  generateCsvMessages(conversation, options, helpers) {
    const headers = ['taskId', 'messageIndex', 'role', 'timestamp', 'contentLength', 'isTruncated', 'toolCount', 'workspace']
    const rows = messagesOf(conversation).map((m, i) => [
      conversation.taskId,
      i + 1,
      m.role,
      m.timestamp,
      (m.content && m.content.length) || 0,
      helpers.isContentTruncated(m.content, options.truncationChars),
      this.extractToolCallsFromMessage(m.content).length,
      this.preEscaped(conversation.metadata.workspace || ''),
    ])
    return this.formatCsvOutput(headers, rows)
  }

  generateCsvTools(conversation) {
    const headers = ['taskId', 'messageIndex', 'toolName', 'serverName', 'executionTime', 'success', 'argsCount', 'resultLength', 'workspace']
    const rows = []
    messagesOf(conversation).forEach((m, i) => {
      for (const t of this.extractToolCallsFromMessage(m.content)) {
        rows.push([
          conversation.taskId,
          i + 1,
          t.toolName,
          t.serverName || '',
          m.timestamp,
          t.success,
          Object.keys(t.arguments || {}).length,
          (t.result && t.result.length) || 0,
          this.preEscaped(conversation.metadata.workspace || ''),
        ])
      }
    })
    return this.formatCsvOutput(headers, rows)
  }

  formatCsvOutput(headers, rows) {
    return [headers.join(','), ...rows.map((r) => r.map((c) => this.escapeCsv(c)).join(','))].join('\n')
  }

  escapeCsv(value) {
    const text = currentMode() === 'fixed' ? (value === undefined || value === null ? '' : String(value)) : String(value || '')
    return /[,"\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text
  }

  truncateText(text, maxLength) {
    if (!text || text.length <= maxLength) return text
    const cut = text.substring(0, maxLength)
    const space = cut.lastIndexOf(' ')
    return space > maxLength * 0.8 ? `${cut.substring(0, space)}...` : `${cut}...`
  }

  calculateJsonStatistics(conversations, classifier) {
    let totalMessages = 0
    let totalSize = 0
    let userMessages = 0
    let assistantMessages = 0
    let toolResults = 0
    let userContentSize = 0
    let assistantContentSize = 0
    let toolResultsSize = 0
    for (const c of conversations) {
      totalMessages += c.metadata.messageCount
      totalSize += c.metadata.totalSize
      for (const m of messagesOf(c)) {
        const size = (m.content ?? '').length
        if (m.role === 'user') {
          if (classifier.isToolResult(m.content)) {
            toolResults++
            toolResultsSize += size
          } else {
            userMessages++
            userContentSize += size
          }
        } else if (m.role === 'assistant') {
          assistantMessages++
          assistantContentSize += size
        }
      }
    }
    return {
      totalSections: totalMessages,
      userMessages,
      assistantMessages,
      toolResults,
      userContentSize,
      assistantContentSize,
      toolResultsSize,
      totalContentSize: totalSize,
      userSizePercentage: pct(userContentSize, totalSize),
      assistantSizePercentage: pct(assistantContentSize, totalSize),
      toolResultsSizePercentage: pct(toolResultsSize, totalSize),
      userMessagePercentage: pct(userMessages, totalMessages),
      assistantMessagePercentage: pct(assistantMessages, totalMessages),
      toolResultsMessagePercentage: pct(toolResults, totalMessages),
    }
  }
}

module.exports = { JsonCsvExporter }
