'use strict'
// The services' own error classes, used when the caller handed over none of its own
// (compat/services/caller-services.js): the legacy server's `StateManagerError` shape (code, service,
// details, cause, category, toJSON) and its `ExportConfigManagerError`.

class StateManagerError extends Error {
  constructor(message, code, service, details, cause, category = 'UNKNOWN') {
    super(message)
    this.name = 'StateManagerError'
    this.code = code
    this.service = service
    this.details = details
    this.cause = cause
    this.category = category
  }

  toJSON() {
    return {
      name: this.name,
      message: this.message,
      code: this.code,
      service: this.service,
      category: this.category,
      details: this.details,
      cause: this.cause ? { name: this.cause.name, message: this.cause.message } : undefined,
    }
  }
}

const ExportConfigManagerErrorCode = {
  CONFIG_PATH_NOT_FOUND: 'CONFIG_PATH_NOT_FOUND',
  CONFIG_LOAD_FAILED: 'CONFIG_LOAD_FAILED',
  CONFIG_SAVE_FAILED: 'CONFIG_SAVE_FAILED',
  NO_STORAGE_DETECTED: 'NO_STORAGE_DETECTED',
}

class ExportConfigManagerError extends StateManagerError {
  constructor(message, code, details, cause) {
    super(message, code, 'ExportConfigManager', details, cause)
    this.name = 'ExportConfigManagerError'
  }
}

module.exports = { StateManagerError, ExportConfigManagerError, ExportConfigManagerErrorCode }
